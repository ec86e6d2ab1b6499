package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
	"github.com/schollz/progressbar/v3"
)

// Options control Convert. The zero value writes Q8_0 next to nothing:
// Out must be set.
type Options struct {
	Out         string        // the .mlb to write; the .mlt goes beside it
	Type        quantize.Type // quantize.TypeQ8_0 (default when 0) or quantize.TypeQ4_0
	Q8Mask      uint32        // Q4_0 only: matrix classes kept in Q8_0 (mlb.Mask*; see ParseQ8Classes)
	Q4Rule      string        // "best", "round", or "" for the architecture's default (round for Gemma 3)
	Imatrix     string        // importance matrix file (MLI1), weighting Q4_0 best fit
	F16Scales   bool          // store scales as f16
	Threads     int           // quantization threads; 0 = 1
	NoTokenizer bool          // do not convert tokenizer.json
	Measure     bool          // measure every matrix's quantization error into Report.Errors
	Progress    io.Writer     // a progress bar is drawn here when it is a terminal
	Log         io.Writer     // warnings, one per line; nil = discard

	// GGML, when set (with Type 0; safetensors input), writes a mixed file
	// whose quantized matrices are ggml blocks of this type, quantized by
	// quantize.QuantizeGGML (IQ4_NL, IQ4_XS or Q6_K), where their width
	// allows: IQ4_XS falls back to IQ4_NL and Q6_K to Q8_0 for widths not a
	// multiple of 256, as llama-quantize does; the linear-attention vectors
	// and a padded FFN stay Q8_0 (f16 scales).
	GGML quantize.GGMLType
	// Mix (with GGML Q4_K or Q5_K) is llama-quantize's _M mix: the
	// classifier (the shared embedding too) and wv and w2 of the layers
	// llama.cpp's use_more_bits picks are Q6_K. Where a width is not a
	// multiple of 256, Q4_K and Q5_K fall back to Q5_0 (llama-quantize
	// uses Q5_1 for Q5_K, which .mlb does not hold) and Q6_K to Q8_0.
	Mix bool
}

// Report says what Convert did.
type Report struct {
	Arch        string // architectures[0] or model_type
	Family      string // the mapping used: llama, mistral, qwen2, ...
	Out         string
	Tokenizer   string // the .mlt written, "" when none
	Header      mlb.Header
	Q4Rule      string
	Tensors     int   // arrays of the body written
	SourceBytes int64 // bytes of the source tensors used
	OutBytes    int64 // size of the .mlb
	Elapsed     time.Duration
	Warnings    []string
	Notes       []string      // exact changes worth telling the user, e.g. the FFN padded to a multiple of 32
	Errors      []TensorError // with Options.Measure: every quantized matrix, worst relative RMSE first
	PeakRSS     int64         // bytes, peak resident memory before verification (Linux; 0 elsewhere)
}

// q8Classes are the --q8 class names and their q8_mask bits.
var q8Classes = map[string]uint32{"tok_emb": mlb.MaskTokEmb, "wcls": mlb.MaskWcls, "wqk": mlb.MaskWQK,
	"wv": mlb.MaskWV, "wo": mlb.MaskWO, "w13": mlb.MaskW13, "w2": mlb.MaskW2}

// ParseQ8Classes turns a comma-separated list of matrix classes (tok_emb,
// wcls, wqk, wv, wo, w13, w2) into a q8_mask.
func ParseQ8Classes(s string) (uint32, error) {
	var m uint32
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		b, ok := q8Classes[c]
		if !ok {
			return 0, fmt.Errorf("convert: unknown matrix class %q (want tok_emb, wcls, wqk, wv, wo, w13 or w2)", c)
		}
		m |= b
	}
	return m, nil
}

// TokenizerPath returns the .mlt path written beside out.
func TokenizerPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".mlt"
}

// Convert converts the Hugging Face checkpoint in dir to opt.Out; a GGUF
// file given as dir goes to ConvertGGUF.
func Convert(ctx context.Context, dir string, opt Options) (*Report, error) {
	start := time.Now()
	if opt.Out == "" {
		return nil, errors.New("convert: no output file given")
	}
	if IsGGUF(dir) {
		return ConvertGGUF(ctx, dir, opt)
	}
	if opt.GGML != 0 {
		if opt.Type != 0 {
			return nil, fmt.Errorf("convert: type %v and ggml type %v both given", opt.Type, opt.GGML)
		}
		switch opt.GGML {
		case quantize.GGMLIQ4_NL, quantize.GGMLIQ4_XS, quantize.GGMLQ6_K, quantize.GGMLQ4_K, quantize.GGMLQ5_K:
		default:
			return nil, fmt.Errorf("convert: no quantizer for %v (have IQ4_NL, IQ4_XS, Q4_K, Q5_K, Q6_K)", opt.GGML)
		}
		if opt.Mix && opt.GGML != quantize.GGMLQ4_K && opt.GGML != quantize.GGMLQ5_K {
			return nil, fmt.Errorf("convert: the _M mix is for Q4_K and Q5_K, not %v", opt.GGML)
		}
		if opt.Q8Mask != 0 {
			return nil, fmt.Errorf("convert: --q8 classes apply to Q4_0 models, not %v", opt.GGML)
		}
		opt.Type, opt.F16Scales = quantize.TypeQ8_0, true // the Q8_0 fallbacks of a mixed file
	}
	if opt.Type == 0 {
		opt.Type = quantize.TypeQ8_0
	}
	if opt.Type == quantize.TypeKeep {
		return nil, errors.New("convert: --type keep applies to GGUF input only (a safetensors checkpoint has no quantized types to keep)")
	}
	if opt.Type != quantize.TypeQ8_0 && opt.Type != quantize.TypeQ4_0 {
		return nil, fmt.Errorf("convert: unknown type %d (want Q8_0 or Q4_0)", opt.Type)
	}
	if opt.Q8Mask != 0 && opt.Type != quantize.TypeQ4_0 {
		return nil, errors.New("convert: --q8 classes only apply to Q4_0 models")
	}
	if opt.Q8Mask&^127 != 0 {
		return nil, fmt.Errorf("convert: q8 mask %#x has unknown bits", opt.Q8Mask)
	}
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	// A folder without safetensors weights is named for what it holds
	// instead (pickle, ONNX or GGUF files, shards without their index), even
	// when config.json is missing too.
	if err := checkWeights(dir); err != nil {
		return nil, err
	}
	cfg, err := readConfig(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	p, err := buildPlan(cfg, ck)
	if err != nil {
		return nil, err
	}
	h := p.mh.h
	h.WType = uint32(opt.Type)
	h.Q8Mask = opt.Q8Mask
	if opt.F16Scales {
		h.ScaleF16 = 1
	}
	if opt.GGML != 0 {
		if err := ggmlTypes(&h, opt.GGML, opt.Mix); err != nil {
			return nil, err
		}
	}
	rule := quantize.BestFit
	switch opt.Q4Rule {
	case "":
		if p.family.q4Round {
			rule = quantize.Round
		}
	case "best":
	case "round":
		rule = quantize.Round
	default:
		return nil, fmt.Errorf("convert: unknown Q4_0 rule %q (want best or round)", opt.Q4Rule)
	}
	rep := &Report{Arch: p.arch, Family: p.family.name, Out: opt.Out, Q4Rule: rule.String(), Warnings: p.warnings, Notes: p.notes}
	if opt.Type != quantize.TypeQ4_0 {
		rep.Q4Rule = ""
	}
	warn := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		rep.Warnings = append(rep.Warnings, s)
		fmt.Fprintln(logw, "warning:", s)
	}
	for _, w := range p.warnings {
		fmt.Fprintln(logw, "warning:", w)
	}

	imp, err := loadImportance(opt.Imatrix, &h, warn)
	if err != nil {
		return nil, err
	}
	if opt.Imatrix != "" && opt.GGML == 0 && (opt.Type != quantize.TypeQ4_0 || rule != quantize.BestFit) {
		warn("--imatrix only changes Q4_0 blocks quantized with the best-fit rule; it has no effect here")
	}
	tok, err := loadTokenizer(dir, opt.NoTokenizer, int(h.Vocab), warn)
	if err != nil {
		return nil, err
	}
	if tok != nil {
		pair.Bind(&h, tok) // the model and the tokenizer name each other
	}

	w, err := createModel(opt.Out, &h, dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			w.Abort()
		}
	}()
	// Progress counts source bytes read.
	srcSize := func(name string) int64 {
		pr := p.prods[name]
		if pr == nil || len(pr.srcs) == 0 {
			return 0
		}
		return int64(dtypeSizes[pr.srcs[0].DType])
	}
	var total int64
	for _, t := range w.Remaining() {
		total += t.Elems() * srcSize(t.Name)
	}
	bar := newBar(opt.Progress, total)
	// Each chunk's quants are garbage once copied into the tensor's arrays;
	// collecting sooner keeps the heap near the largest quantized tensor
	// instead of twice that (the arrays hold no pointers, so a cycle is cheap).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	var buf []float32 // one chunk of float32 rows, reused by every matrix
	for {
		ti, more := w.Next()
		if !more {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if bar != nil {
			bar.Describe(ti.Name)
		}
		pr := p.prods[ti.Name]
		if pr == nil {
			return nil, fmt.Errorf("convert: internal error: no source for %s", ti.Name)
		}
		switch {
		case ti.Type == mlb.F32:
			v, err := pr.vec()
			if err != nil {
				return nil, err
			}
			if err := w.WriteF32(ti.Name, v); err != nil {
				return nil, err
			}
		case ti.Type.Quantized():
			qt := quantize.TypeQ8_0
			if ti.Type == mlb.Q4_0 {
				qt = quantize.TypeQ4_0
			}
			qo := quantize.Options{Name: ti.Name, F16Scales: opt.F16Scales, Q4Rule: rule, Threads: opt.Threads,
				Importance: imp(ti)}
			var acc *errSums
			if opt.Measure {
				acc = &errSums{}
			}
			var gt quantize.GGMLType
			if ti.Type.Blocked() {
				gt = quantize.GGMLType(mlb.TypeCode(ti.Type)) // mlb's codes are quantize's values
			}
			q, s, err := quantizeRows(ctx, pr, ti, qt, gt, qo, bar, &buf, acc)
			if err != nil {
				return nil, err
			}
			if acc != nil {
				rep.Errors = append(rep.Errors, tensorError(ti, acc, qo.Importance != nil))
			}
			if gt != 0 {
				err = w.WriteBlocks(ti.Name, q)
			} else {
				err = w.WriteMatrix(ti.Name, q, s)
			}
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("convert: internal error: tensor %s of type %v", ti.Name, ti.Type)
		}
		if bar != nil && ti.Type == mlb.F32 {
			bar.Add64(ti.Elems() * srcSize(ti.Name))
		}
		for _, t := range pr.srcs {
			rep.SourceBytes += int64(len(t.data))
			t.release()
		}
		rep.Tensors++
	}
	worstFirst(rep.Errors)
	rep.PeakRSS = peakRSS()
	// Close verifies the file with every check of the loader before it
	// renames it into place. Give the conversion's heap back first: the
	// check maps the whole output.
	debug.FreeOSMemory()
	if err := commitOutputs(w, tok, opt.Out, warn); err != nil {
		return nil, err
	}
	ok = true
	if bar != nil {
		bar.Finish()
	}
	st, err := os.Stat(opt.Out)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	rep.Header, rep.OutBytes = h, st.Size()
	if tok != nil {
		rep.Tokenizer = TokenizerPath(opt.Out)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// commitOutputs puts the finished model in place, and with it its tokenizer
// (bound to it by pair.Bind), in pair.Commit's order: after a kill at any
// point a reader gets the old pair or the new one, never one of each. Without
// a tokenizer the model alone is committed.
// A tokenizer left beside a model committed alone is warned about when it
// names another model: the loaders refuse the two together.
func commitOutputs(w *mlb.Writer, tok *mlt.Tokenizer, out string, warn func(format string, args ...any)) error {
	if tok != nil {
		return pair.Commit(w, tok, TokenizerPath(out))
	}
	if err := w.Close(); err != nil {
		return err
	}
	if old, err := mlt.Open(TokenizerPath(out)); err == nil && old.Flags&mlt.FlagPair != 0 {
		warn("%s beside the model is an earlier convert's tokenizer and names that model: run, serve and chat refuse the two together (convert with the tokenizer, or give one with -t)", TokenizerPath(out))
	}
	return nil
}

// chunkBytes bounds the float32 rows converted at once, so a large
// embedding never exists whole in float32.
var chunkBytes = 16 << 20

// quantizeRows converts and quantizes a matrix chunk by chunk. Rows are
// quantized independently, so the bytes equal those of one Matrix call.
// With acc set it also sums the quantization error (weighted by
// qo.Importance when set).
func quantizeRows(ctx context.Context, pr *producer, ti mlb.TensorInfo, qt quantize.Type, gt quantize.GGMLType, qo quantize.Options, bar *progressbar.ProgressBar, bufp *[]float32, acc *errSums) (q, s []byte, err error) {
	rows, cols := ti.Rows, ti.Cols
	if pr.t == nil || pr.rows != rows || pr.t.Cols() > cols {
		return nil, nil, fmt.Errorf("convert: internal error: %s: source does not match %d×%d", ti.Name, rows, cols)
	}
	sc, sr := pr.t.Cols(), rows // source columns and rows; the rest is zero padding
	if pr.srcRows != 0 {
		sr = pr.srcRows
	}
	per := max(1, chunkBytes/(4*cols))
	if n := min(per, rows) * cols; cap(*bufp) < n {
		*bufp = make([]float32, max(n, chunkBytes/4))
	}
	buf := *bufp
	for r0 := 0; r0 < rows; r0 += per {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		r1 := min(rows, r0+per)
		x := buf[:(r1-r0)*cols]
		if pr.rowOf == nil && sc == cols && r1 <= sr {
			if err := pr.t.RowsF32(x, r0, r1); err != nil {
				return nil, nil, err
			}
			pr.t.releaseRows(r0, r1)
		} else {
			for r := r0; r < r1; r++ {
				row := x[(r-r0)*cols : (r-r0+1)*cols]
				if r >= sr {
					clear(row)
					continue
				}
				s := r
				if pr.rowOf != nil {
					s = pr.rowOf(r)
				}
				if err := pr.t.RowsF32(row[:sc], s, s+1); err != nil {
					return nil, nil, err
				}
				clear(row[sc:])
			}
		}
		if pr.scale != 1 {
			for i := range x {
				x[i] *= pr.scale
			}
		}
		if gt != 0 { // ggml blocks (a mixed file): no separate scales
			cq, err := quantize.QuantizeGGML(gt, x, r1-r0, cols, qo)
			if err != nil {
				return nil, nil, fmt.Errorf("convert: %w", err)
			}
			if acc != nil {
				acc.addBlocks(x, cols, gt, cq, qo.Importance)
			}
			if q == nil {
				q = make([]byte, 0, rows*cols/gt.BlockElems()*gt.BlockBytes())
			}
			q = append(q, cq...)
			if bar != nil {
				bar.Add64(int64(len(x) * dtypeSizes[pr.t.DType]))
			}
			continue
		}
		cq, cs, err := quantize.Matrix(qt, x, r1-r0, cols, qo)
		if err != nil {
			return nil, nil, fmt.Errorf("convert: %w", err)
		}
		if acc != nil {
			acc.add(x, cols, qt, cq, cs, qo.F16Scales, qo.Importance)
		}
		if q == nil {
			nb := rows * cols / quantize.BlockSize
			sb := 4 // bytes per scale
			if qo.F16Scales {
				sb = 2
			}
			q = make([]byte, 0, nb*qt.BlockBytes())
			s = make([]byte, 0, nb*sb)
		}
		q = append(q, cq...)
		s = append(s, cs...)
		if bar != nil {
			bar.Add64(int64(len(x) * dtypeSizes[pr.t.DType]))
		}
	}
	return q, s, nil
}

// newBar returns a progress bar on w when w is a terminal, else nil.
func newBar(w io.Writer, total int64) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("converting"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionFullWidth())
}

// peakRSS reads VmHWM, the process's peak resident memory, where /proc
// has it.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// createModel starts the output model for the header mapped from src; an
// error is either the I/O failure or the header's validation, which is ours.
func createModel(out string, h *mlb.Header, src string) (*mlb.Writer, error) {
	w, err := mlb.Create(out, h)
	if errors.Is(err, mlb.ErrIO) {
		return nil, fmt.Errorf("convert: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("convert: %s: the mapped header does not validate: %w", src, err)
	}
	return w, nil
}

// ggmlTypes makes h a mixed file (wtype 3, f16 scales) whose quantized
// matrices are of type gt (mix: llama-quantize's _M mix) where
// Options.GGML and Options.Mix say they can be, the classifier Q6_K.
func ggmlTypes(h *mlb.Header, gt quantize.GGMLType, mix bool) error {
	probe := *h
	probe.WType, probe.Q8Mask = mlb.WTypeQ8_0, 0
	mats, err := mlb.Tensors(&probe)
	if err != nil {
		return fmt.Errorf("convert: the mapped header does not validate: %w", err)
	}
	base := map[quantize.GGMLType]mlb.DType{quantize.GGMLIQ4_NL: mlb.IQ4_NL, quantize.GGMLIQ4_XS: mlb.IQ4_XS,
		quantize.GGMLQ4_K: mlb.Q4_K, quantize.GGMLQ5_K: mlb.Q5_K, quantize.GGMLQ6_K: mlb.Q6_K}[gt]
	// llama-quantize's fallbacks for widths not a multiple of 256.
	fallback := map[mlb.DType]mlb.DType{mlb.IQ4_XS: mlb.IQ4_NL, mlb.Q4_K: mlb.Q5_0, mlb.Q5_K: mlb.Q5_0, mlb.Q6_K: mlb.Q8_0}
	nl := int(h.NLayers)
	h.WType, h.ScaleF16, h.Q8Mask, h.Types = mlb.WTypeMixed, 1, 0, nil
	for _, t := range mats {
		if !t.Type.Quantized() {
			continue
		}
		typ := base
		c := maskClass(t.Name)
		// The classifier (or the embedding it shares) is Q6_K for every
		// type, as llama-quantize keeps it: its error reaches every logit.
		cls := t.Name == "wcls" || t.Name == "tok_emb" && h.SharedClassifier != 0
		if cls || mix && (c == mlb.MaskWV || c == mlb.MaskW2) && useMoreBits(layerOf(t.Name), nl) {
			typ = mlb.Q6_K
		}
		if f, ok := fallback[typ]; ok && t.Cols%256 != 0 {
			typ = f
		}
		if strings.HasSuffix(t.Name, ".lb") || strings.HasSuffix(t.Name, ".la") || t.Cols%32 != 0 ||
			h.TrueHiddenDim != 0 && (c == mlb.MaskW13 || c == mlb.MaskW2) {
			typ = mlb.Q8_0
		}
		h.Types = append(h.Types, mlb.TypeCode(typ))
	}
	return nil
}

// useMoreBits is llama.cpp's use_more_bits(i, n): the first and last
// eighth of the layers and every third one between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// layerOf returns N of a "blk.N.…" name, or −1.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = 10*n + int(c-'0')
	}
	return n
}
