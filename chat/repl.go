package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/krafla/krafla/infer"
)

// LineReader gives the user's lines. ReadLine returns io.EOF when the input
// ends (Ctrl-D) and ErrInterrupt for Ctrl-C at the prompt.
type LineReader interface {
	ReadLine(prompt string) (string, error)
}

// ErrInterrupt is what a LineReader returns for Ctrl-C at the prompt.
var ErrInterrupt = errors.New("chat: interrupted")

// Prompt is what the interactive loop shows before each line.
const Prompt = ">>> "

// REPL is the loop of krafla chat.
type REPL struct {
	Conv *Conversation
	In   LineReader
	Out  io.Writer // the answers
	Info io.Writer // notices, /help, statistics, errors of /commands
	// Piped: every line is one user message (no /commands), only answers
	// are printed, so a script can drive it.
	Piped bool
	// Verbose prints each answer's prefill and generation figures to Info
	// (in piped mode too).
	Verbose bool
	// AnswerContext returns the context of one answer and a function to
	// call when the answer ends; krafla chat cancels it on Ctrl-C
	// (signal.NotifyContext). nil: the Run context.
	AnswerContext func(ctx context.Context) (context.Context, context.CancelFunc)
}

// Run reads lines until the input ends or /bye.
func (r *REPL) Run(ctx context.Context) error {
	if !r.Piped {
		fmt.Fprintln(r.Info, "Send a message (/? for help, Ctrl-D or /bye to leave)")
	}
	for {
		prompt := Prompt
		if r.Piped {
			prompt = ""
		}
		line, err := r.In.ReadLine(prompt)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, ErrInterrupt):
			fmt.Fprintln(r.Info, "Use Ctrl-D or /bye to leave.")
			continue
		case err != nil:
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			// An empty line sends nothing; before the first message of a
			// template that needs one, say so instead of waiting silently.
			if err := r.Conv.NeedsUser(); err != nil {
				fmt.Fprintf(r.Info, "(an empty line sends nothing, and this model's chat template needs a user message first: type your message; the template says: %v)\n", err)
			}
			continue
		}
		if !r.Piped && strings.HasPrefix(line, "/") {
			quit, err := r.command(line)
			if err != nil {
				fmt.Fprintln(r.Info, err)
			}
			if quit {
				return nil
			}
			continue
		}
		if err := r.answer(ctx, line); err != nil {
			if !errors.Is(err, ErrTooLong) || r.Piped {
				return err
			}
			fmt.Fprintln(r.Info, err)
		}
	}
}

func (r *REPL) answer(ctx context.Context, line string) error {
	actx, stop := ctx, context.CancelFunc(func() {})
	if r.AnswerContext != nil {
		actx, stop = r.AnswerContext(ctx)
	}
	defer stop()
	rep, err := r.Conv.Reply(actx, line, func(s string) error {
		_, err := io.WriteString(r.Out, s)
		return err
	})
	if rep != nil && rep.Dropped > 0 && !r.Piped {
		fmt.Fprintf(r.Info, "(the conversation outgrew the context of %d positions: dropped the %d oldest messages; the system message stays)\n",
			r.Conv.opt.Session.Ctx(), rep.Dropped)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(r.Out)
	if r.Verbose {
		n := rep.PromptTokens - rep.Reused
		fmt.Fprintf(r.Info, "prefill: %d new tokens (%d of %d from the cache) in %.3f s; answer: %d tokens",
			n, rep.Reused, rep.PromptTokens, rep.PromptTime.Seconds(), len(rep.Tokens))
		if rep.Steps > 0 {
			fmt.Fprintf(r.Info, ", %.1f tokens/s", float64(rep.Steps)/rep.GenerateTime.Seconds())
		}
		fmt.Fprintf(r.Info, " (%s)\n", rep.Reason)
	}
	if r.Piped {
		return nil
	}
	switch rep.Reason {
	case infer.StopCancel:
		fmt.Fprintln(r.Info, "(answer interrupted)")
	case infer.StopContext:
		fmt.Fprintf(r.Info, "(the context of %d positions is full; older messages are dropped on the next turn)\n", r.Conv.opt.Session.Ctx())
	case infer.StopLimit:
		fmt.Fprintln(r.Info, "(token limit reached)")
	}
	fmt.Fprintln(r.Out)
	return nil
}

// command is one of the /commands; run returns true to end the session.
type command struct {
	name, args, help string
	run              func(r *REPL, arg string) (bool, error)
}

var commands []command

func init() {
	commands = []command{
		{"/bye", "", "leave (Ctrl-D too)", func(*REPL, string) (bool, error) { return true, nil }},
		{"/clear", "", "forget the conversation (the system message stays)", func(r *REPL, _ string) (bool, error) {
			r.Conv.Turns = nil
			fmt.Fprintln(r.Info, "Cleared the conversation.")
			return false, nil
		}},
		{"/system", "TEXT", "set the system message (no TEXT: show it; \"\" removes it)", cmdSystem},
		{"/set", "temp|top_p|top_k|seed VALUE", "change sampling for the next answers (no args: show them)", cmdSet},
		{"/save", "FILE", "write the conversation as JSON ({\"messages\": [...]})", func(r *REPL, arg string) (bool, error) {
			if arg == "" {
				return false, errors.New("/save needs a FILE")
			}
			if err := r.Conv.Save(arg); err != nil {
				return false, err
			}
			fmt.Fprintf(r.Info, "Saved %d messages to %s.\n", len(r.Conv.Messages()), arg)
			return false, nil
		}},
		{"/load", "FILE", "continue a saved conversation", func(r *REPL, arg string) (bool, error) {
			if arg == "" {
				return false, errors.New("/load needs a FILE")
			}
			if err := r.Conv.Load(arg); err != nil {
				return false, err
			}
			fmt.Fprintf(r.Info, "Loaded %d messages from %s.\n", len(r.Conv.Messages()), arg)
			return false, nil
		}},
		{"/help", "", "this list (/? too)", cmdHelp},
		{"/?", "", "", cmdHelp},
	}
}

// command runs a /command line: the first word must name one exactly.
func (r *REPL) command(line string) (bool, error) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	for _, c := range commands {
		if c.name == name {
			return c.run(r, arg)
		}
	}
	return false, fmt.Errorf("unknown command %s (/help lists them)", name)
}

func cmdHelp(r *REPL, _ string) (bool, error) {
	w := tabwriter.NewWriter(r.Info, 2, 8, 2, ' ', 0)
	for _, c := range commands {
		if c.help != "" {
			fmt.Fprintf(w, "  %s %s\t%s\n", c.name, c.args, c.help)
		}
	}
	fmt.Fprintln(w, "  Ctrl-C\tstop the answer being written")
	return false, w.Flush()
}

func cmdSystem(r *REPL, arg string) (bool, error) {
	switch arg {
	case "":
		if r.Conv.System == "" {
			fmt.Fprintln(r.Info, "No system message.")
		} else {
			fmt.Fprintf(r.Info, "System message: %s\n", r.Conv.System)
		}
		return false, nil
	case `""`:
		arg = ""
	}
	r.Conv.System = arg
	fmt.Fprintln(r.Info, "Set the system message.")
	return false, nil
}

func cmdSet(r *REPL, arg string) (bool, error) {
	s := r.Conv.Sampling()
	if arg == "" {
		fmt.Fprintf(r.Info, "temp %g, top_p %g, top_k %d, seed %d\n", s.Temp, s.TopP, s.TopK, s.Seed)
		return false, nil
	}
	key, val, ok := strings.Cut(arg, " ")
	val = strings.TrimSpace(val)
	if !ok || val == "" {
		return false, errors.New("usage: /set temp|top_p|top_k|seed VALUE")
	}
	bad := func(rule string) error { return fmt.Errorf("/set %s %s: %s", key, val, rule) }
	switch key {
	case "temp":
		f, err := strconv.ParseFloat(val, 32)
		if err != nil || f < 0 || math.IsNaN(f) {
			return false, bad("want a number, 0 or more (0: greedy)")
		}
		s.Temp = float32(f)
	case "top_p":
		f, err := strconv.ParseFloat(val, 32)
		if err != nil || !(f >= 0 && f <= 1) {
			return false, bad("want a number between 0 and 1")
		}
		s.TopP = float32(f)
	case "top_k":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return false, bad("want a count, 0 or more (0: all)")
		}
		s.TopK = n
	case "seed":
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return false, bad("want an unsigned integer")
		}
		s.Seed = n
	default:
		return false, fmt.Errorf("/set %s: unknown; want temp, top_p, top_k or seed", key)
	}
	r.Conv.SetSampling(s)
	fmt.Fprintf(r.Info, "Set %s to %s.\n", key, val)
	return false, nil
}
