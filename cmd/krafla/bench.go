package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/atomicfile"
)

func init() { addCommand(newBenchCmd) }

type benchOptions struct {
	Prefill, Gen, Reps int
	Depth              int // positions already in the cache when each test starts
	Threads            []int
	CPUProfile         string // pprof CPU profile of the whole run; "": none
	NoHuge             bool   // repack the weights into ordinary memory
	KV                 infer.KVType
}

func newBenchCmd() *cobra.Command {
	var o benchOptions
	c := &cobra.Command{
		Use:   "bench MODEL.mlb",
		Short: "Measure prefill and generation speed",
		Long: `bench measures, like llama-bench, prefill (-p tokens evaluated as one prompt)
and generation (-n tokens evaluated one at a time, each from the previous
one's argmax), from an empty cache or, with --depth D (llama-bench's -d),
after D pseudo-random tokens were evaluated first (not timed: the tests then
show the speed at positions D and up), repeated -r times; the table gives
the median tokens/s and the range. Token ids are pseudo-random, so no tokenizer
is needed. KRAFLA_KERNEL=generic forces the pure-Go kernels. The weights are
first repacked into huge pages, as run does (--no-huge-pages: into ordinary
memory). --cpuprofile writes a pprof profile of the whole run.`,
		Example: `  krafla bench llama.mlb -p 512 -n 128 --threads 1,2 -r 3
  krafla bench llama.mlb -p 512 -n 128 --depth 4096   # at positions 4096 and up`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Prefill < 0 || o.Gen < 0 || o.Prefill+o.Gen == 0 {
				return usageError{fmt.Errorf("-p %d -n %d: want counts of tokens, not both 0", o.Prefill, o.Gen)}
			}
			if o.Depth < 0 {
				return usageError{fmt.Errorf("--depth %d: want a number of positions, at least 0", o.Depth)}
			}
			if o.Reps < 1 {
				return usageError{fmt.Errorf("-r %d: want at least 1 repetition", o.Reps)}
			}
			for _, t := range o.Threads {
				if t < 1 {
					return usageError{fmt.Errorf("--threads %d: must be at least 1", t)}
				}
			}
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runBench(cmd.Context(), p, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.IntVarP(&o.Prefill, "prompt", "p", 512, "prompt tokens evaluated as one batch (0: skip)")
	f.IntVarP(&o.Gen, "gen", "n", 128, "tokens generated one at a time (0: skip)")
	f.IntVarP(&o.Reps, "repetitions", "r", 3, "repetitions of each test (the median is reported)")
	f.Var(kvFlag{&o.KV}, "kv", "KV cache element type: f32, or f16 (half the memory and cache reads)")
	f.IntVarP(&o.Depth, "depth", "d", 0, "positions evaluated (untimed) before each test, like llama-bench -d")
	f.IntSliceVar(&o.Threads, "threads", []int{runtime.NumCPU()}, "thread counts to measure, e.g. 1,2")
	f.BoolVar(&o.NoHuge, "no-huge-pages", false, "repack the weights into ordinary memory instead of huge pages (run's default is huge pages)")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the measured runs to `FILE` (go tool pprof -top krafla FILE)")
	return c
}

func runBench(ctx context.Context, path string, o benchOptions, out, errOut io.Writer) (err error) {
	if err := asm.Init(); err != nil {
		return err
	}
	m, err := infer.Open(path)
	if err != nil {
		return err
	}
	defer m.Close()
	if !o.NoHuge {
		hugePages(m, true, errOut)
	}
	cfg := m.Config()
	if need := o.Depth + max(o.Prefill, o.Gen); need > cfg.MaxSeq {
		return fmt.Errorf("--depth %d + -p %d / -n %d: more positions than the model's max_seq %d", o.Depth, o.Prefill, o.Gen, cfg.MaxSeq)
	}
	r := rand.New(rand.NewPCG(1, 2))
	prompt := make([]int, o.Prefill)
	for i := range prompt {
		prompt[i] = r.IntN(cfg.Vocab)
	}
	depth := make([]int, o.Depth)
	for i := range depth {
		depth[i] = r.IntN(cfg.Vocab)
	}
	suffix := ""
	if o.Depth > 0 {
		suffix = fmt.Sprintf(" @ d%d", o.Depth)
	}
	if o.CPUProfile != "" {
		stop, err := startCPUProfile(o.CPUProfile)
		if err != nil {
			return err
		}
		defer func() {
			if e := stop(); e != nil && err == nil {
				err = e
			}
		}()
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "model\tweights\tkernel\tthreads\ttest\tt/s (median)\tmin\tmax\t\n")
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for _, th := range o.Threads {
		s, err := m.NewSession(infer.SessionOptions{Ctx: o.Depth + max(o.Prefill, o.Gen), Threads: th, KV: o.KV})
		if err != nil {
			return err
		}
		if th == o.Threads[0] {
			cacheLine(errOut, s)
		}
		// Warm up: the first pass faults the mapped weights in and starts the
		// workers; llama-bench does the same.
		if err := s.Eval(prompt[:min(len(prompt), 8)], false, nil); err != nil && len(prompt) > 0 {
			s.Close()
			return err
		}
		if len(prompt) == 0 {
			if err := s.Eval([]int{1}, false, nil); err != nil {
				s.Close()
				return err
			}
		}
		primed := false // s holds depth's tokens and what followed them
		row := func(test string, n int, f func() error) error {
			var rates []float64
			for range o.Reps {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := startAt(s, depth, &primed); err != nil {
					return err
				}
				t0 := time.Now()
				if err := f(); err != nil {
					return err
				}
				rates = append(rates, float64(n)/time.Since(t0).Seconds())
			}
			slices.Sort(rates)
			med := rates[len(rates)/2]
			if len(rates)%2 == 0 {
				med = (rates[len(rates)/2-1] + rates[len(rates)/2]) / 2
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t\n", name, mib(m.WeightBytes()), asm.Variant().Description(), th, test, med, rates[0], rates[len(rates)-1])
			return nil
		}
		if o.Prefill > 0 {
			err = row(fmt.Sprintf("pp%d%s", o.Prefill, suffix), o.Prefill, func() error { return s.Eval(prompt, false, nil) })
		}
		if err == nil && o.Gen > 0 {
			err = row(fmt.Sprintf("tg%d%s", o.Gen, suffix), o.Gen, func() error {
				tok := prompt0(prompt)
				greedy := infer.NewSampler(infer.SamplerOptions{})
				for range o.Gen {
					err := s.Eval([]int{tok}, false, func(_ int, l []float32) error {
						tok = greedy.Sample(l)
						return nil
					})
					if err != nil {
						return err
					}
				}
				return nil
			})
		}
		s.Close()
		if err != nil {
			return err
		}
	}
	return tw.Flush()
}

// startAt leaves s holding exactly the tokens of depth: rewound to them when
// *primed says s starts with them (a previous test of this session), else
// reset and evaluated.
func startAt(s *infer.Session, depth []int, primed *bool) error {
	if *primed && s.CanRewind(len(depth)) {
		return s.Rewind(len(depth))
	}
	s.Reset()
	if err := s.Eval(depth, false, nil); err != nil {
		return err
	}
	*primed = true
	return nil
}

func prompt0(p []int) int {
	if len(p) > 0 {
		return p[0]
	}
	return 1
}

// startCPUProfile starts pprof's CPU profile into a temporary file beside
// path; stop ends it and renames the file onto path (a write error is
// returned then, and path is left as it was).
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Commit(nil); err != nil {
			return fmt.Errorf("--cpuprofile %s: %w", path, err)
		}
		return nil
	}, nil
}
