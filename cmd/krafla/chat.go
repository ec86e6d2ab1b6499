package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newChatCmd) }

type chatOptions struct {
	modelOptions
	System       string
	Template     string
	TemplateName string
	N            int
	Verbose      bool
	NoHuge       bool
	Schema       string // --json-schema FILE
	Grammar      string // --grammar FILE (GBNF)
	Sampling     infer.SamplerOptions
}

func newChatCmd() *cobra.Command {
	var o chatOptions
	c := &cobra.Command{
		Use:   "chat MODEL.mlb",
		Short: "Hold a conversation with a chat model in the terminal",
		Long: `chat renders the conversation with the model's own chat template (the one
convert or tokenize took from tokenizer_config.json or chat_template.jinja, or
the file given with --template), streams each answer as it is generated, and
keeps the KV cache between turns, so each turn evaluates only its new tokens.

At the prompt: line editing and history (arrows, Ctrl-A/E/K/W, Ctrl-R),
Ctrl-C stops the answer being written, Ctrl-D or /bye leaves. /help lists the
commands: /clear, /system TEXT, /set temp|top_p|top_k|seed VALUE, /save FILE,
/load FILE (the conversation as JSON, {"messages": [...]}).

When the conversation outgrows --ctx, its oldest turns are dropped (the system
message stays) and chat says so. An answer ends at the tokenizer's EOS, at any
stop id of the chat template (generation_config.json's eos_token_id), at -n
tokens or when the context is full.

Without a terminal (stdin piped) every input line is one user message (no
/commands) and only the answers are printed, one per line, so chat can be
scripted.`,
		Example: `  krafla chat qwen.mlb
  krafla chat llama.mlb --system "Answer in one sentence." --temp 0.6
  krafla chat model.mlb -t model.mlt --template chat_template.jinja
  printf 'Hello\nWhat did I just say?\n' | krafla chat qwen.mlb --temp 0
  krafla chat qwen.mlb --json-schema answer.schema.json   # every answer is JSON valid against it`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.N < -1 {
				return usageError{fmt.Errorf("-n %d: want a count of tokens, or -1 for no limit", o.N)}
			}
			if o.Template != "" && o.TemplateName != "" {
				return usageError{errors.New("--template and --template-name exclude each other")}
			}
			if err := checkSampling(&o.Sampling); err != nil {
				return err
			}
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runChat(cmd.Context(), p, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.bind(c)
	o.bindKV(c)
	f := c.Flags()
	f.StringVar(&o.System, "system", "", "system message of the conversation")
	f.StringVar(&o.Template, "template", "", "chat template FILE: a .jinja file, or a tokenizer_config.json / chat_template.json (default: the tokenizer's)")
	f.StringVar(&o.TemplateName, "template-name", "", "which of the tokenizer's named templates (e.g. tool_use; default: the default one)")
	f.IntVarP(&o.N, "max-tokens", "n", -1, "tokens per answer at most (-1: until a stop token or a full context)")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print each answer's prefill (new and cached tokens) and generation speed to stderr")
	f.BoolVar(&o.NoHuge, "no-huge-pages", false, "repack the weights into ordinary memory instead of huge pages")
	f.StringVar(&o.Schema, "json-schema", "", "constrain every answer to JSON valid against the JSON Schema in FILE")
	f.StringVar(&o.Grammar, "grammar", "", "constrain every answer to the GBNF grammar (llama.cpp syntax) in FILE")
	bindSampling(c, &o.Sampling)
	return c
}

// chatTemplate is the template of --template FILE, or the tokenizer's.
func chatTemplate(tok *mlt.Tokenizer, file, name string) (*chat.Template, error) {
	if file != "" {
		return chat.Load(file, tok)
	}
	return chat.FromTokenizer(tok, name)
}

func runChat(ctx context.Context, path string, o chatOptions, in io.Reader, out, errOut io.Writer) error {
	m, tok, err := loadModel(path, o.modelOptions)
	if err != nil {
		return err
	}
	defer m.Close()
	tmpl, err := chatTemplate(tok, o.Template, o.TemplateName)
	if err != nil {
		return err
	}
	if !o.NoHuge {
		hugePages(m, o.Verbose, errOut)
	}
	s, err := m.NewSession(infer.SessionOptions{Ctx: o.Ctx, Threads: o.Threads, KV: o.KV})
	if err != nil {
		return err
	}
	defer s.Close()
	if o.Verbose {
		cacheLine(errOut, s)
	}
	mk, err := constraintMaker(o.Schema, o.Grammar, tok, tmpl.StopIDs())
	if err != nil {
		return err
	}
	conv := chat.NewConversation(chat.Options{Template: tmpl, Tokenizer: tok, Session: s, Sampling: o.Sampling, MaxTokens: o.N, Constraint: mk})
	conv.System = o.System
	r := &chat.REPL{Conv: conv, Out: out, Info: errOut, Verbose: o.Verbose}

	f, isFile := in.(*os.File)
	if !isFile || !isTerminal(f) {
		r.Piped = true
		r.In = newPipedReader(in)
		return r.Run(ctx)
	}
	// Ctrl-C stops an answer, not the session: main's handler lets go of it
	// for as long as the session lasts (SIGTERM still ends the process).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	signal.Stop(mainSignals)
	signal.Notify(mainSignals, syscall.SIGTERM)
	defer func() {
		signal.Stop(sigs)
		signal.Notify(mainSignals, os.Interrupt, syscall.SIGTERM)
	}()
	r.AnswerContext = func(ctx context.Context) (context.Context, context.CancelFunc) {
		for len(sigs) > 0 { // a Ctrl-C from before the answer
			<-sigs
		}
		actx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-sigs:
				cancel()
			case <-actx.Done():
			}
		}()
		return actx, cancel
	}
	l := liner.NewLiner()
	defer l.Close()
	l.SetCtrlCAborts(true)
	r.In = linerReader{l}
	fmt.Fprintf(errOut, "chat: %s with template %s; context of %d positions\n", path, tmpl.Name, s.Ctx())
	return r.Run(ctx)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// linerReader reads lines with editing and history (github.com/peterh/liner).
type linerReader struct{ l *liner.State }

func (r linerReader) ReadLine(prompt string) (string, error) {
	s, err := r.l.Prompt(prompt)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", chat.ErrInterrupt
	}
	if err == nil && s != "" {
		r.l.AppendHistory(s)
	}
	return s, err
}

// maxChatLine bounds one piped input line.
const maxChatLine = 16 << 20

type pipedReader struct{ sc *bufio.Scanner }

func newPipedReader(in io.Reader) pipedReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxChatLine)
	return pipedReader{sc}
}

func (r pipedReader) ReadLine(string) (string, error) {
	if r.sc.Scan() {
		return r.sc.Text(), nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", fmt.Errorf("chat: an input line is longer than %d bytes", maxChatLine)
		}
		return "", err
	}
	return "", io.EOF
}
