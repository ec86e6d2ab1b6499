package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/store"
)

func init() {
	addCommand(newPullCmd)
	addCommand(newListCmd)
	addCommand(newRmCmd)
	addCommand(newShowCmd)
}

// nameHelp is what the model-name commands teach.
const nameHelp = `Names: ORG/NAME[:TAG][@REVISION]
  ORG/NAME      a Hugging Face repo, e.g. HuggingFaceTB/SmolLM2-135M-Instruct
  :TAG          a safetensors checkpoint: the type it is converted to, q8_0
                (default) or q4_0 (best fit); a -GGUF repo: the file, chosen
                as llama.cpp's -hf does (Q4_K_M picks *Q4_K_M.gguf, or the
                split set *Q4_K_M-00001-of-0000N.gguf with all its files;
                without a tag Q4_K_M, then Q8_0, then Q4_0, then the first;
                K-quant and IQ4 blocks are imported bit for bit)
  @REVISION     a branch, tag or commit (default main)

A name resolves to the model store ($KRAFLA_HOME/models, default
~/.local/share/krafla/models); else to the Hugging Face cache, converted
without the network (what huggingface-cli, transformers or llama.cpp
downloaded is used as is); else it is pulled. A path that exists wins over
a name.

Environment (as huggingface_hub reads it):
  HF_TOKEN        access token for gated and private repos (else the file
                  $HF_HOME/token that huggingface-cli login writes)
  HF_ENDPOINT     the hub's address (a mirror), default https://huggingface.co
  HF_HOME         default ~/.cache/huggingface
  HF_HUB_CACHE    the cache, default $HF_HOME/hub
  HF_HUB_OFFLINE  1: never touch the network; say what is missing
  HTTPS_PROXY, NO_PROXY   proxies
  KRAFLA_HOME     the store's parent folder (else $XDG_DATA_HOME/krafla)`

// newStore is the store and hub client configured from the environment;
// progress goes to errw (bars only when it is a terminal).
func newStore(errw io.Writer) *store.Store {
	c := hub.NewClient(nil)
	c.Progress = downloadBars(errw)
	return &store.Store{Dir: store.Dir(nil), Hub: c, Progress: errw, Log: errw, Threads: runtime.NumCPU()}
}

// writerIsTerminal reports whether w is a terminal.
func writerIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && isTerminal(f)
}

// downloadBars draws one bar per file on a terminal; nil (quiet) otherwise.
func downloadBars(w io.Writer) func(path string, done, total int64) {
	if !writerIsTerminal(w) {
		return nil
	}
	var bar *progressbar.ProgressBar
	var cur string
	return func(path string, done, total int64) {
		if path != cur || bar == nil {
			if bar != nil {
				bar.Finish()
			}
			cur = path
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(path),
				progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set64(done)
		if done == total {
			bar.Finish()
		}
	}
}

// hubError adds the way out to a hub error.
func hubError(err error) error {
	var he *hub.Error
	if errors.As(err, &he) {
		if h := he.Hint(); h != "" {
			return fmt.Errorf("%w\n%s", err, h)
		}
	}
	return err
}

// modelPath turns a command's model argument into a file: a path that
// exists is itself; a name (ORG/NAME[:TAG][@REVISION]) is resolved through
// the store (the store, the HF cache, a pull). Anything else is returned
// as is, for the command's own error.
func modelPath(ctx context.Context, arg string, errw io.Writer) (string, error) {
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	ref, err := hub.ParseRef(arg)
	if err != nil || strings.HasSuffix(arg, ".mlb") || strings.HasSuffix(arg, ".mlt") || strings.HasSuffix(arg, ".mli") || strings.HasSuffix(arg, ".gguf") {
		return arg, nil
	}
	m, err := newStore(errw).Resolve(ctx, ref)
	if err != nil {
		return "", hubError(err)
	}
	return m.Path, nil
}

func newPullCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pull ORG/NAME[:TAG][@REVISION]",
		Short: "Download a model from the Hugging Face hub and convert it into the model store",
		Long: `pull downloads from the Hugging Face hub what convert needs of a repo into
the Hugging Face cache, laid out as huggingface_hub lays it out, then converts
it into the model store. A safetensors checkpoint: config.json, the tokenizer
and chat template files, the safetensors shards and their index, nothing
else (a repo with only PyTorch pickle weights is refused before anything is
downloaded). A -GGUF repo: the one file the tag chooses, or every file of a
split set (NAME-00001-of-0000N.gguf and on, as llama.cpp's gguf-split writes
them). Files the cache already holds (another tool's, or an interrupted
download's finished shards) are used as they are; only the missing ones are
downloaded.

Downloads resume: an interrupted or killed pull keeps blobs/ETAG.incomplete
and the next pull continues it with a Range request. Every file's sha256 (or
git sha1) is checked before it is renamed into place. Two pulls at once
wait for each other (a lock file beside the cache).

` + nameHelp,
		Example: `  krafla pull HuggingFaceTB/SmolLM2-135M-Instruct          # q8_0
  krafla pull HuggingFaceTB/SmolLM2-135M-Instruct:q4_0
  krafla pull Qwen/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M
  krafla pull org/model@v1.0
  HF_TOKEN=hf_... krafla pull meta-llama/Llama-3.2-1B-Instruct`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := hub.ParseRef(args[0])
			if err != nil {
				return usageError{err}
			}
			s := newStore(cmd.ErrOrStderr())
			m, err := s.Pull(cmd.Context(), ref)
			if err != nil {
				return hubError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s (%s, commit %.12s)\n", m.Name(), m.Path, sizeText(m.Bytes), m.Commit)
			return nil
		},
	}
}

func sizeText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1e3)
}

func newListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the models in the store",
		Long:  "list shows every model of the store ($KRAFLA_HOME/models): name, type, size, the commit it was converted from and when.",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := &store.Store{Dir: store.Dir(nil)}
			ms, err := s.List()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				type row struct {
					Name string `json:"name"`
					store.Meta
					Path  string `json:"path"`
					Bytes int64  `json:"bytes"`
				}
				rows := []row{}
				for _, m := range ms {
					rows = append(rows, row{m.Name(), m.Meta, m.Path, m.Bytes})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(ms) == 0 {
				fmt.Fprintf(out, "no models in %s (try krafla pull ORG/NAME)\n", s.Dir)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tSIZE\tCOMMIT\tMODIFIED")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t%s\n", m.Repo, m.Type, sizeText(m.Bytes), m.Commit, m.Created.Local().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm ORG/NAME[:TAG][@REVISION]",
		Short: "Remove a model from the store (the Hugging Face cache is left alone)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := hub.ParseRef(args[0])
			if err != nil {
				return usageError{err}
			}
			gone, err := (&store.Store{Dir: store.Dir(nil)}).Remove(ref)
			for _, m := range gone {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s (commit %.12s, %s)\n", m.Name(), m.Commit, sizeText(m.Bytes))
			}
			return err
		},
	}
}

func newShowCmd() *cobra.Command {
	var opt inspectOptions
	c := &cobra.Command{
		Use:   "show ORG/NAME[:TAG][@REVISION]",
		Short: "Say where a stored model came from and what inspect says of it",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := hub.ParseRef(args[0])
			if err != nil {
				return usageError{err}
			}
			s := &store.Store{Dir: store.Dir(nil), Hub: hub.NewClient(nil)}
			m, err := s.Find(ref)
			if err != nil {
				return err
			}
			if m == nil {
				return fmt.Errorf("%s is not in the store %s (krafla pull %s)", ref, s.Dir, ref)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "name      %s\nsource    https://huggingface.co/%s (%s, revision %s, commit %s)\nfile      %s\nconverted %s\n\n",
				m.Name(), m.Repo, m.Source, m.Revision, m.Commit, m.Path, m.Created.Local().Format(time.RFC3339))
			return runInspect(m.Path, opt, out)
		},
	}
	c.Flags().BoolVar(&opt.JSON, "json", false, "inspect's JSON after the source lines")
	return c
}
