package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/quantize"
)

func init() { addCommand(newConvertCmd) }

type convertOptions struct {
	Output      string
	Type        string
	Q8          string
	Q4Rule      string
	Imatrix     string
	F16Scales   bool
	Threads     int
	NoTokenizer bool
	TypeSet     bool // --type was given (a GGUF file's own types are kept otherwise)
	Report      bool
	JSON        bool
}

func newConvertCmd() *cobra.Command {
	var o convertOptions
	c := &cobra.Command{
		Use:   "convert DIR | FILE.gguf",
		Short: "Convert a Hugging Face checkpoint folder or a GGUF file into an .mlb model (and .mlt tokenizer)",
		Long: `convert reads DIR's config.json and model.safetensors (or the shards listed in
model.safetensors.index.json; F32, F16 or BF16), maps the architecture onto the
.mlb format (Llama 1-3, Mistral, Qwen2/2.5, Qwen3, SmolLM3, Gemma 1/2/3,
Qwen3.5 dense, Phi-3/Phi-4, Granite 3), quantizes every matrix and writes the
model, then tokenizer.json as an .mlt beside it. Architectures and features
the format cannot hold (mixture of experts, longrope, biases without an array,
tensors the mapping does not use) are refused with the reason. PyTorch pickle
weights (*.bin, *.pt, *.pth, *.ckpt) are never opened, since loading a pickle
can execute code: a folder holding only those is refused with the way to
convert them to safetensors.

The model is converted tensor by tensor, so memory stays near the largest
tensor; the output is written to a temporary file (.NAME.krafla-tmp-PID-N),
renamed into place and opened again to verify it before convert reports
success. A convert that was killed leaves that file behind; the next convert
to the same output removes it and says so. The model and its tokenizer name
each other (one pair id in both), both are written completely before either is
renamed, and the model is renamed first: run, serve and chat refuse a model
beside a tokenizer it was not written with, and complete a pair that a killed
convert left between the two renames.

A GGUF file (llama.cpp, ollama, the Hub's -GGUF repositories) is recognised
by its magic and imported: llama (and Mistral), qwen2, qwen3, gemma, gemma2,
gemma3, phi3, granite and smollm3. Its Q8_0 and Q4_0 tensors are copied bit
for bit (with their f16 scales, so the .mlb gets f16 scales); F32, F16 and
BF16 are quantized as above. Q4_1, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS
blocks (what Q4_K_M, Q5_K_M, Q6_K and IQ4_XS files hold) are copied bit for
bit into a mixed .mlb: the default without --type for a file that has them
(--type keep asks for it). Q5_1 and Q2_K/Q3_K, and every block with --type
q8_0 or q4_0, are dequantized exactly as ggml does and requantized, and a line
names the tensors that lost precision; other types are refused by name. A file
of Q8_0 and Q4_0 only keeps, without --type, each class of matrices Q4_0 if
the file has it 4-bit throughout, else Q8_0. The tokenizer (tokenizer.ggml.*) and chat
template become the .mlt. A split set (llama.cpp's gguf-split:
NAME-00001-of-0000N.gguf and on) is given by its first file; the others are
found beside it, and a missing or inconsistent one is named.

Matrix classes for --q8: tok_emb, wcls, wqk (wq, wk, wg, lqkv), wv (wv, lz),
wo (wo, lout), w13 (w1, w3), w2.

--report adds a table of every quantized matrix with the relative RMSE of its
quantization, sqrt(Σ(ŵ−w)² / Σw²), worst first. With --imatrix the sums are
weighted by each input column's importance (the mean square of that input on
the calibration text), which approximates the relative error of the matrix's
output. --json prints the summary and that table as one JSON object.

An FFN width that is not a multiple of 32 (the format's block) is padded with
zero channels, which is exact; the header's true_hidden_dim records the true
width. Widths that cannot be padded exactly (dim, head sizes) are refused with
the reason.`,
		Example: `  krafla convert ./Llama-3.2-1B -o llama.mlb
  krafla convert ./Qwen3-0.6B -o qwen3.mlb --type q4_0 --q8 tok_emb,w2
  krafla convert ./gemma-3-1b-it -o gemma.mlb --type q4_0 --imatrix gemma.imatrix --f16-scales
  krafla convert qwen2.5-0.5b-instruct-q8_0.gguf -o qwen.mlb      # GGUF: Q8_0 copied bit for bit
  krafla convert Qwen3-8B-Q8_0-00001-of-00002.gguf -o qwen3.mlb  # a split set: give the first file
  krafla convert ./stories260K -o s.mlb --type q4_0 --report       # per-matrix error, worst first
  krafla convert ./stories260K -o s.mlb --json | jq '.quantization[0]'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.TypeSet = cmd.Flags().Changed("type")
			return runConvert(cmd.Context(), args[0], o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "output .mlb (default: the folder's name with .mlb, in the current directory)")
	f.StringVar(&o.Type, "type", "q8_0", "weight type: q8_0, q4_0, q4_k_m (the quality/size choice), q5_k_m, q4_k, q5_k, q6_k, iq4_nl, iq4_xs (safetensors input: ggml's K-quants, _m as llama-quantize mixes them, and codebook types; where a width is not a multiple of 256 Q4_K and Q5_K fall back to Q5_0, Q6_K to Q8_0 and IQ4_XS to IQ4_NL; the classifier is Q6_K for all of them, as llama-quantize keeps it; --imatrix weights them), or keep (GGUF input: every matrix keeps its type, Q4_K/Q5_K/Q6_K/IQ4_XS/IQ4_NL/Q5_0/Q4_1 blocks copied bit for bit)")
	f.StringVar(&o.Q8, "q8", "", "with --type q4_0: comma-separated matrix classes to keep in Q8_0")
	f.StringVar(&o.Q4Rule, "q4-rule", "", "Q4_0 rounding: best (least-squares fit) or round (llama.cpp); default round for Gemma 3, best otherwise")
	f.StringVar(&o.Imatrix, "imatrix", "", "importance matrix (from krafla imatrix) weighting the Q4_0 best fit")
	f.BoolVar(&o.F16Scales, "f16-scales", false, "store the block scales as f16 instead of f32")
	f.IntVar(&o.Threads, "threads", runtime.NumCPU(), "quantization threads (the output is identical for any number)")
	f.BoolVar(&o.NoTokenizer, "no-tokenizer", false, "do not convert tokenizer.json")
	f.BoolVar(&o.Report, "report", false, "print every matrix's quantization error (relative RMSE, imatrix-weighted with --imatrix), worst first")
	f.BoolVar(&o.JSON, "json", false, "print the summary and the quantization errors as JSON")
	return c
}

func runConvert(ctx context.Context, dir string, o convertOptions, out, errw io.Writer) error {
	opt := convert.Options{Out: o.Output, Imatrix: o.Imatrix, F16Scales: o.F16Scales, Threads: o.Threads,
		NoTokenizer: o.NoTokenizer, Progress: errw, Log: errw, Measure: o.Report || o.JSON}
	switch strings.ToLower(o.Type) {
	case "q8_0", "q8":
		opt.Type = quantize.TypeQ8_0
	case "q4_0", "q4":
		opt.Type = quantize.TypeQ4_0
	case "keep":
		opt.Type = quantize.TypeKeep
	case "iq4_nl":
		opt.GGML = quantize.GGMLIQ4_NL
	case "iq4_xs":
		opt.GGML = quantize.GGMLIQ4_XS
	case "q6_k":
		opt.GGML = quantize.GGMLQ6_K
	case "q4_k_m":
		opt.GGML, opt.Mix = quantize.GGMLQ4_K, true
	case "q5_k_m":
		opt.GGML, opt.Mix = quantize.GGMLQ5_K, true
	case "q4_k":
		opt.GGML = quantize.GGMLQ4_K
	case "q5_k":
		opt.GGML = quantize.GGMLQ5_K
	default:
		return usageError{fmt.Errorf("--type %q: want q8_0, q4_0, q4_k_m, q5_k_m, q4_k, q5_k, q6_k, iq4_nl, iq4_xs or keep (GGUF input)", o.Type)}
	}
	m, err := convert.ParseQ8Classes(o.Q8)
	if err != nil {
		return usageError{fmt.Errorf("--q8 %q: %s", o.Q8, strings.TrimPrefix(err.Error(), "convert: "))}
	}
	if m != 0 && opt.Type != quantize.TypeQ4_0 {
		return usageError{fmt.Errorf("--q8 needs --type q4_0 (a Q8_0 model is Q8_0 throughout)")}
	}
	opt.Q8Mask = m
	switch rule := strings.ToLower(o.Q4Rule); rule {
	case "", "best", "round":
		opt.Q4Rule = rule
	default:
		return usageError{fmt.Errorf("--q4-rule %q: want best or round", o.Q4Rule)}
	}
	if opt.Q4Rule != "" && opt.Type != quantize.TypeQ4_0 {
		return usageError{fmt.Errorf("--q4-rule needs --type q4_0 (Q8_0 has one rounding rule)")}
	}
	if o.Threads < 1 {
		return usageError{fmt.Errorf("--threads %d: want at least 1", o.Threads)}
	}
	if strings.EqualFold(filepath.Ext(opt.Out), ".mlt") {
		// The tokenizer goes to the output with the extension .mlt: it
		// would replace the model just written.
		return usageError{fmt.Errorf("-o %s: .mlt is the tokenizer's extension (it is written beside the model); name the model .mlb", opt.Out)}
	}
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("convert: %w", err)
	case !st.IsDir() && !convert.IsGGUF(dir):
		return fmt.Errorf("convert: %s is not a folder: give the checkpoint folder holding config.json and the safetensors, or a GGUF file", dir)
	case !st.IsDir() && !o.TypeSet:
		// A GGUF file: keep its Q8_0 and Q4_0 classes as they are, and every
		// block a mixed .mlb keeps (a Q4_K_M file) bit for bit.
		if opt.Type, err = convert.GGUFImportType(dir); err != nil {
			return err
		}
	}
	if opt.Out == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		base := filepath.Base(abs)
		if prefix, _, _, ok := gguf.SplitName(base); ok {
			base = prefix + ".gguf" // the set's name, not its first file's
		}
		opt.Out = base + ".mlb"
	}
	// A bad output path fails now, not after the whole model is converted.
	if err := checkOutputPath("-o", opt.Out); err != nil {
		return err
	}
	rep, err := convert.Convert(ctx, dir, opt)
	if err != nil {
		return err
	}
	typ := strings.ToUpper(quantize.Type(rep.Header.WType).String())
	if rep.Header.WType == uint32(quantize.TypeKeep) {
		typ = "mixed types (each matrix's GGUF type kept)"
	}
	if rep.Q4Rule != "" {
		typ += ", " + rep.Q4Rule + " fit"
	}
	if o.JSON {
		return printConvertJSON(out, rep, typ, o.Imatrix)
	}
	fmt.Fprintf(out, "wrote %s: %s (%s), %s, %d tensors, %.1f MB in %.1fs\n", rep.Out, rep.Arch, rep.Family, typ,
		rep.Tensors, float64(rep.OutBytes)/1e6, rep.Elapsed.Seconds())
	for _, n := range rep.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	if rep.PeakRSS > 0 {
		fmt.Fprintf(out, "peak memory %.0f MB before verification\n", float64(rep.PeakRSS)/1e6)
	}
	if rep.Tokenizer != "" {
		fmt.Fprintf(out, "wrote %s\n", rep.Tokenizer)
	}
	if o.Report {
		return printQuantReport(out, rep.Errors, o.Imatrix)
	}
	return nil
}

// printQuantReport prints the quantization error of every matrix, worst first.
func printQuantReport(out io.Writer, es []convert.TensorError, imat string) error {
	title := "Quantization error (relative RMSE, worst first)"
	if imat != "" {
		title = "Quantization error (relative RMSE weighted by the importance of each input in " + imat + ", worst first; * = unweighted)"
	}
	if len(es) == 0 {
		// A GGUF file's Q8_0 and Q4_0 blocks are copied, not quantized again.
		_, err := fmt.Fprintln(out, "\nQuantization error: no matrix was quantized by this conversion (blocks copied as they are, or an import path that does not measure)")
		return err
	}
	rows := make([][]string, 0, len(es))
	for _, e := range es {
		v := fmt.Sprintf("%.5f", e.RelRMSE)
		if imat != "" && !e.Weighted {
			v += " *"
		}
		rows = append(rows, []string{e.Name, e.Type, fmt.Sprintf("%d × %d", e.Rows, e.Cols), v})
	}
	return mlbTable(out, title, []string{"tensor", "type", "shape", "rel. RMSE"}, rows)
}

// printConvertJSON prints the conversion's summary and errors for scripts.
func printConvertJSON(out io.Writer, rep *convert.Report, typ, imat string) error {
	v := struct {
		Out          string                `json:"out"`
		Tokenizer    string                `json:"tokenizer,omitempty"`
		Arch         string                `json:"arch"`
		Family       string                `json:"family"`
		Type         string                `json:"type"`
		Tensors      int                   `json:"tensors"`
		Bytes        int64                 `json:"bytes"`
		Seconds      float64               `json:"seconds"`
		Notes        []string              `json:"notes"`
		Warnings     []string              `json:"warnings"`
		Imatrix      string                `json:"imatrix,omitempty"`
		Quantization []convert.TensorError `json:"quantization"`
	}{rep.Out, rep.Tokenizer, rep.Arch, rep.Family, typ, rep.Tensors, rep.OutBytes, rep.Elapsed.Seconds(),
		nonNil(rep.Notes), nonNil(rep.Warnings), imat, rep.Errors}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nonNil makes an empty list print as [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
