// Command krafla converts Hugging Face checkpoints to .mlb/.mlt files, inspects
// and validates them, tokenizes text and runs quantized models on the CPU.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Exit statuses that scripts can rely on.
const (
	exitOK      = 0
	exitFailure = 1 // the command failed: invalid file, bad input, I/O error
	exitUsage   = 2 // bad flags or arguments
)

// commands holds the constructors of the subcommands; each subcommand's file
// adds itself in an init function, so the commands stay one file each.
var commands []func() *cobra.Command

func addCommand(f func() *cobra.Command) { commands = append(commands, f) }

// inspectOptions are the flags of `krafla inspect`, shared by every file kind.
type inspectOptions struct {
	JSON    bool // print JSON for scripts instead of tables
	Tensors bool // also list every array of the body
}

// inspectors maps a file's 4-byte magic ("MLB1", "MLT1", "MLI1") to the function
// that validates and prints that kind of file; each kind's owner registers it in init.
var inspectors = map[string]func(path string, opt inspectOptions, out io.Writer) error{}

// usageError marks an error in the command line rather than in the work.
type usageError struct{ error }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "krafla",
		Short: "Quantized LLM model files and a CPU runtime",
		Long: `krafla converts Hugging Face checkpoints into .mlb model files and .mlt
tokenizer files, inspects and validates them, tokenizes text exactly as Hugging
Face does, and runs the models on the CPU.

Typical session:
  krafla convert ./Llama-3.2-1B -o llama.mlb --type q4_0   # also writes llama.mlt
  krafla inspect llama.mlb                                 # header, layers, totals
  krafla run llama.mlb -p "The capital of France is"`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})
	for _, f := range commands {
		root.AddCommand(f())
	}
	return root
}

// exactArgs is cobra.ExactArgs with errors marked as usage errors; the
// message shows the command's usage line and, for too many arguments, what
// was given (an unquoted text split by the shell is the usual cause).
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		what := "argument"
		if n != 1 {
			what = "arguments"
		}
		msg := fmt.Sprintf("%s takes %d %s, got %d", c.Name(), n, what, len(args))
		if len(args) > n {
			q := make([]string, len(args))
			for i, a := range args {
				q[i] = fmt.Sprintf("%q", a)
			}
			msg += " (" + strings.Join(q, ", ") + ")"
		}
		return usageError{fmt.Errorf("%s\nUsage: %s", msg, c.UseLine())}
	}
}

// checkOutputPath refuses, before any work is done, an output path that
// cannot be written: an existing folder, or a file in a folder that does not
// exist. flag names the option in the message ("-o").
func checkOutputPath(flag, path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: is a folder, want a file name", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s %s: folder %s does not exist", flag, path, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, path, err)
	case !st.IsDir():
		return fmt.Errorf("%s %s: %s is not a folder", flag, path, dir)
	}
	return nil
}

// buildVersion and buildCommit are stamped by scripts/release.sh
// (-ldflags "-X main.buildVersion=v0.3.0 -X main.buildCommit=<sha>"); a
// plain go build leaves them empty and version reads the build info.
var buildVersion, buildCommit string

// version is the module version and VCS revision the binary was built from:
// the stamped ones if any, else those of the build info.
func version() string {
	if buildVersion != "" {
		v := buildVersion
		if buildCommit != "" {
			v += fmt.Sprintf(" (%.12s)", buildCommit)
		}
		return v + ", " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev != "" {
		v += fmt.Sprintf(" (%.12s%s)", rev, modified)
	}
	return v + ", " + bi.GoVersion
}

// interruptGrace is how long a command may take to stop after the first
// interrupt before the process ends anyway (a command that does not watch
// the context would otherwise swallow Ctrl-C and SIGTERM).
const interruptGrace = 3 * time.Second

// mainSignals receives the interrupts main turns into cancelling the
// command's context; a command that handles Ctrl-C itself (chat: it stops
// an answer, not the session) takes os.Interrupt off it with signal.Stop.
var mainSignals = make(chan os.Signal, 1)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := mainSignals
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel()
		// A second signal ends the process at once.
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		time.Sleep(interruptGrace)
		fmt.Fprintln(os.Stderr, "krafla: interrupted")
		os.Exit(exitFailure)
	}()
	os.Exit(execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs one command line and returns the exit status, printing the
// error, if any, to errw.
func execute(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	// A command writing a file removes the temporary files that a killed
	// krafla left for the same target (internal/atomicfile); say which.
	atomicfile.OnStale(func(s atomicfile.Stale) { fmt.Fprintln(errw, "krafla:", s) })
	defer atomicfile.OnStale(nil)
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(errw, "krafla: interrupted")
		return exitFailure
	}
	var ue usageError
	usage := errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ")
	msg := strings.TrimRight(err.Error(), "\n")
	if usage && !strings.Contains(msg, "--help' for usage") {
		if cmd == nil {
			cmd = root
		}
		msg += fmt.Sprintf("\nRun '%s --help' for usage.", cmd.CommandPath())
	}
	fmt.Fprintln(errw, "krafla:", msg)
	if usage {
		return exitUsage
	}
	return exitFailure
}
