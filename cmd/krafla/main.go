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
	"syscall"

	"github.com/spf13/cobra"
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

// exactArgs is cobra.ExactArgs with errors marked as usage errors.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(c, args); err != nil {
			return usageError{fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
		}
		return nil
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err == nil {
		os.Exit(exitOK)
	}
	fmt.Fprintln(os.Stderr, "krafla:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(exitUsage)
	}
	os.Exit(exitFailure)
}
