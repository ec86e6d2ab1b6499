package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/x448/float16"
)

// ExportOptions control ExportGGUF.
type ExportOptions struct {
	Tokenizer string    // the .mlt; "" = the model's path with .mlt, if it exists
	Log       io.Writer // notices, one per line; nil = discard
}

// ExportReport says what ExportGGUF did.
type ExportReport struct {
	Arch      string // the llama.cpp architecture written
	Out       string
	Tokenizer string // the .mlt exported, "" when none
	Tensors   int
	Bytes     int64
	Notices   []string // what llama.cpp will do differently, what was rounded
}

// keyTrueHidden records a padded FFN's true width, so that importing the
// file again gives the same .mlb (llama.cpp ignores keys it does not know and
// runs the zero channels, which add nothing).
const keyTrueHidden = "krafla.true_hidden_dim"

// keyLayerFlags and keyAttnScale record what llama.cpp derives in code
// (the Gemma 2/3 and SmolLM3 layer patterns, Gemma's score scale) when the
// model differs from that, so that an import gives the model back.
const (
	keyLayerFlags = "krafla.layer_flags"
	keyAttnScale  = "krafla.attention_scale"
	keyRopeAttn   = "krafla.rope_attn_factor" // the exact rope_attn_factor when attn_factor·mscale rounds otherwise
)

// exportArch picks the llama.cpp architecture whose graph computes what the
// header describes.
func exportArch(h *mlb.Header) (string, error) {
	noRope := false
	for l := range int(h.NLayers) {
		f := h.LayerFlag(l)
		if f&mlb.FlagLinear != 0 || h.AttnGate != 0 {
			return "", errors.New("linear attention and gated attention (Qwen3.5) are not exported")
		}
		noRope = noRope || f&mlb.FlagNoRoPE != 0
	}
	switch {
	case h.Act == mlb.ActGELU && h.PostNorms != 0 && h.QKNorm != 0:
		return "gemma3", nil
	case h.Act == mlb.ActGELU && h.PostNorms != 0:
		return "gemma2", nil
	case h.Act == mlb.ActGELU:
		return "gemma", nil
	case h.PostNorms != 0:
		return "", errors.New("sandwich norms without GELU (GLM-4) have no llama.cpp architecture here")
	case h.QKVBias != 0:
		return "qwen2", nil
	case h.QKNorm != 0:
		return "qwen3", nil
	case noRope:
		return "smollm3", nil
	case h.EmbedScale != 0 || h.AttnScale != 0:
		return "granite", nil
	}
	return "llama", nil
}

// ggufName maps an .mlb tensor name to llama.cpp's.
var ggufNames = map[string]string{
	"attn_norm": "attn_norm.weight", "wq": "attn_q.weight", "wk": "attn_k.weight", "wv": "attn_v.weight",
	"wo": "attn_output.weight", "bq": "attn_q.bias", "bk": "attn_k.bias", "bv": "attn_v.bias",
	"q_norm": "attn_q_norm.weight", "k_norm": "attn_k_norm.weight", "ffn_norm": "ffn_norm.weight",
	"w1": "ffn_gate.weight", "w2": "ffn_down.weight", "w3": "ffn_up.weight",
	"post_attn_norm": "post_attention_norm.weight", "post_ffn_norm": "post_ffw_norm.weight",
}

func ggufName(name string) string {
	switch name {
	case "tok_emb":
		return "token_embd.weight"
	case "final_norm":
		return "output_norm.weight"
	case "wcls":
		return "output.weight"
	}
	i := strings.LastIndexByte(name, '.')
	return name[:i+1] + ggufNames[name[i+1:]]
}

// ExportGGUF writes the .mlb at in as a GGUF file llama.cpp and ollama load:
// llama.cpp's architecture names, metadata keys and tensor names, the
// tokenizer and chat template of the .mlt. Q8_0 and Q4_0 matrices are written
// as ggml blocks byte for byte when the .mlb has f16 scales; f32 scales are
// rounded to f16 and a notice says so. For the architectures llama.cpp runs
// with NeoX RoPE the q/k rows go back to the rotate-half order it expects.
func ExportGGUF(in, out string, opt ExportOptions) (*ExportReport, error) {
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	f, err := mlb.Open(in)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	h := &f.Header
	arch, err := exportArch(h)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", in, err)
	}
	rep := &ExportReport{Arch: arch, Out: out}
	notice := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		rep.Notices = append(rep.Notices, s)
		fmt.Fprintln(logw, "note:", s)
	}
	kvs, extra, err := exportMeta(h, arch, notice)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", in, err)
	}
	tokPath := opt.Tokenizer
	if tokPath == "" {
		if p := TokenizerPath(in); fileExists(p) {
			tokPath = p
		}
	}
	if tokPath != "" {
		// Only the model's own tokenizer goes into the GGUF.
		t, err := pair.OpenTokenizer(in, h.PairID, tokPath)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		tk, err := exportTokenizer(t, int(h.Vocab), notice)
		if err != nil {
			return nil, fmt.Errorf("export: %s: %w", tokPath, err)
		}
		kvs = append(kvs, tk...)
		if e := t.Embed; e != nil {
			// llama.cpp's LLAMA_POOLING_TYPE_MEAN, CLS and LAST are 1, 2
			// and 3, the .mlt's values; its callers normalize. It has no
			// max pooling (its 4 is rank) and pools every token.
			if e.Pooling == mlt.PoolMax {
				return nil, fmt.Errorf("export: %s: the model pools by max, which llama.cpp cannot (its pooling types are none, mean, cls, last and rank)", tokPath)
			}
			kvs = append(kvs, gguf.KV{Key: arch + ".pooling_type", Value: gguf.Uint32(uint32(e.Pooling))})
			if e.ExcludePrompt {
				notice("the model leaves the prompt's tokens out of pooling (include_prompt false); llama.cpp pools them too, so its vectors of prompted inputs differ")
			}
		}
		rep.Tokenizer = tokPath
	} else {
		notice("no tokenizer (.mlt) beside the model: the GGUF has none, and llama.cpp refuses to load a file without one")
	}

	neox := arch != "llama" && arch != "granite" && arch != "smollm3"
	var unperm func(int) int // interleaved → rotate-half: source row of each output row
	if neox {
		perm := ropePerm(h.HeadDimEff(), h.RotDimEff())
		n := max(h.QDim(), h.KVDim())
		inv := make([]int, n)
		for r := range n {
			inv[perm(r)] = r
		}
		unperm = func(r int) int { return inv[r] }
	}
	if h.ScaleF16 == 0 {
		notice("the .mlb stores f32 block scales; GGUF blocks hold f16, so every scale is rounded to f16 (re-convert with --f16-scales for a byte-exact export)")
	}

	type item struct {
		info gguf.TensorInfo
		data func() ([]byte, error)
	}
	var items []item
	if extra != nil {
		items = append(items, item{gguf.TensorInfo{Name: "rope_freqs.weight", Type: gguf.F32, Shape: []uint64{uint64(len(extra))}},
			func() ([]byte, error) { return f32Bytes(extra), nil }})
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Name == "layer_flags" || t.Name == "type_table" { // header data: the keys, and each tensor's own GGUF type
			continue
		}
		name := ggufName(t.Name)
		base := t.Name[strings.LastIndexByte(t.Name, '.')+1:]
		var rowOf func(int) int
		if unperm != nil && (base == "wq" || base == "wk" || base == "bq" || base == "bk" || base == "q_norm" || base == "k_norm") {
			rowOf = unperm
		}
		shape := []uint64{uint64(t.Cols), uint64(t.Rows)}
		if t.Rows == 1 {
			shape = shape[:1]
		}
		switch t.Type {
		case mlb.F32:
			items = append(items, item{gguf.TensorInfo{Name: name, Type: gguf.F32, Shape: shape}, func() ([]byte, error) {
				v := t.F32
				if rowOf != nil { // a vector: its entries follow wq/wk's rows
					p := make([]float32, len(v))
					for i := range p {
						p[i] = v[rowOf(i)]
					}
					v = p
				}
				return f32Bytes(v), nil
			}})
		case mlb.Q8_0, mlb.Q4_0:
			gt := gguf.Q8_0
			if t.Type == mlb.Q4_0 {
				gt = gguf.Q4_0
			}
			items = append(items, item{gguf.TensorInfo{Name: name, Type: gt, Shape: shape}, func() ([]byte, error) {
				return ggmlBlocks(t, rowOf), nil
			}})
		case mlb.Q4_1, mlb.Q5_0, mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_NL, mlb.IQ4_XS:
			// ggml's own blocks, written back as they were read (rows in
			// GGUF order).
			items = append(items, item{gguf.TensorInfo{Name: name, Type: ggufOfBlocked[t.Type], Shape: shape}, func() ([]byte, error) {
				if rowOf == nil {
					return t.Q, nil
				}
				rb := t.Cols / t.Type.BlockElems() * t.Type.BlockBytes()
				out := make([]byte, 0, len(t.Q))
				for r := range t.Rows {
					sr := rowOf(r)
					out = append(out, t.Q[sr*rb:(sr+1)*rb]...)
				}
				return out, nil
			}})
		default:
			return nil, fmt.Errorf("export: %s: tensor %s of type %v has no GGUF counterpart", in, t.Name, t.Type)
		}
	}
	infos := make([]gguf.TensorInfo, len(items))
	for i, it := range items {
		infos[i] = it.info
	}
	w, err := gguf.Create(out, kvs, infos)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for _, it := range items {
		b, err := it.data()
		if err == nil {
			err = w.WriteTensor(it.info.Name, b)
		}
		if err != nil {
			w.Abort()
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	rep.Tensors = len(items)
	if st, err := os.Stat(out); err == nil {
		rep.Bytes = st.Size()
	}
	return rep, nil
}

// ggufOfBlocked maps a mixed file's ggml block types to their GGUF types.
var ggufOfBlocked = map[mlb.DType]gguf.Type{
	mlb.Q4_1: gguf.Q4_1, mlb.Q5_0: gguf.Q5_0, mlb.Q4_K: gguf.Q4_K, mlb.Q5_K: gguf.Q5_K,
	mlb.Q6_K: gguf.Q6_K, mlb.IQ4_NL: gguf.IQ4_NL, mlb.IQ4_XS: gguf.IQ4_XS,
}

// mixedFileType is llama.cpp's general.file_type for a mixed file: the
// LLAMA_FTYPE_MOSTLY_* of the type holding the most weights (Q4_K counts as
// Q4_K_M, Q5_K as Q5_K_M: the mixes such files come from). llama.cpp reads the
// key only to print it.
func mixedFileType(h *mlb.Header) uint32 {
	ts, err := mlb.Tensors(h)
	if err != nil {
		return 7
	}
	n := map[mlb.DType]int64{}
	best := mlb.Q8_0
	for _, t := range ts {
		if t.Type.Quantized() {
			n[t.Type] += t.Elems()
			if n[t.Type] > n[best] {
				best = t.Type
			}
		}
	}
	return map[mlb.DType]uint32{mlb.Q8_0: 7, mlb.Q4_0: 2, mlb.Q4_1: 3, mlb.Q5_0: 8, mlb.Q4_K: 15,
		mlb.Q5_K: 17, mlb.Q6_K: 18, mlb.IQ4_NL: 25, mlb.IQ4_XS: 30}[best]
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// ggmlBlocks interleaves an .mlb matrix's scales and quants into ggml blocks
// (an f16 scale, then 32 int8 quants or 16 bytes of nibbles), rows taken in
// rowOf order. Scales that came from f16 convert back to the same bits.
func ggmlBlocks(t *mlb.Tensor, rowOf func(int) int) []byte {
	nb := t.Cols / mlb.BlockSize
	qb := mlb.BlockSize
	if t.Type == mlb.Q4_0 {
		qb /= 2
	}
	out := make([]byte, 0, t.Rows*nb*(qb+2))
	for r := range t.Rows {
		sr := r
		if rowOf != nil {
			sr = rowOf(r)
		}
		for b := range nb {
			d := float16.Fromfloat32(t.D[sr*nb+b])
			out = binary.LittleEndian.AppendUint16(out, d.Bits())
			out = append(out, t.Q[(sr*nb+b)*qb:(sr*nb+b+1)*qb]...)
		}
	}
	return out
}

// exportMeta writes the architecture's keys as llama.cpp's loader reads them
// (llama-model.cpp load_hparams), and returns the rope_freqs factors of a
// Llama 3 scaling.
func exportMeta(h *mlb.Header, arch string, notice func(string, ...any)) ([]gguf.KV, []float32, error) {
	a := arch + "."
	ftype := uint32(7) // LLAMA_FTYPE_MOSTLY_Q8_0
	if h.WType == mlb.WTypeQ4_0 {
		ftype = 2 // LLAMA_FTYPE_MOSTLY_Q4_0
	}
	if h.WType == mlb.WTypeMixed {
		ftype = mixedFileType(h)
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String(arch)},
		{Key: "general.name", Value: gguf.String("krafla export")},
		{Key: "general.file_type", Value: gguf.Uint32(ftype)},
		{Key: "general.quantization_version", Value: gguf.Uint32(2)},
		{Key: a + "context_length", Value: gguf.Uint32(h.MaxSeq)},
		{Key: a + "embedding_length", Value: gguf.Uint32(h.Dim)},
		{Key: a + "block_count", Value: gguf.Uint32(h.NLayers)},
		{Key: a + "feed_forward_length", Value: gguf.Uint32(h.HiddenDim)},
		{Key: a + "attention.head_count", Value: gguf.Uint32(h.NHeads)},
		{Key: a + "attention.head_count_kv", Value: gguf.Uint32(h.NKVHeads)},
		{Key: a + "attention.key_length", Value: gguf.Uint32(uint32(h.HeadDimEff()))},
		{Key: a + "attention.value_length", Value: gguf.Uint32(uint32(h.HeadDimEff()))},
		{Key: a + "attention.layer_norm_rms_epsilon", Value: gguf.Float32(h.NormEps)},
		{Key: a + "rope.freq_base", Value: gguf.Float32(h.RopeTheta)},
		{Key: a + "rope.dimension_count", Value: gguf.Uint32(uint32(h.RotDimEff()))},
		{Key: a + "vocab_size", Value: gguf.Uint32(h.Vocab)},
	}
	add := func(k string, v gguf.Value) { kvs = append(kvs, gguf.KV{Key: a + k, Value: v}) }
	if h.TrueHiddenDim != 0 {
		kvs = append(kvs, gguf.KV{Key: keyTrueHidden, Value: gguf.Uint32(h.TrueHiddenDim)})
	}
	var freqs []float32
	switch h.RopeType {
	case mlb.RopePlain:
	case mlb.RopeLinear:
		add("rope.scaling.type", gguf.String("linear"))
		add("rope.scaling.factor", gguf.Float32(h.RopeFactor))
	case mlb.RopeLlama3:
		if arch != "llama" {
			return nil, nil, fmt.Errorf("Llama 3 RoPE scaling on architecture %s: llama.cpp reads rope_freqs only for llama", arch)
		}
		freqs = llama3Factors(float64(h.RopeTheta), h.RotDimEff(), float64(h.RopeFactor), float64(h.RopeLowFreqFactor),
			float64(h.RopeHighFreqFactor), int(h.RopeOrigMaxSeq))
		if _, lo, hi, orig, ok := llama3Params(freqs, float64(h.RopeTheta), h.RotDimEff()); !ok ||
			float32(lo) != h.RopeLowFreqFactor || float32(hi) != h.RopeHighFreqFactor || uint32(orig) != h.RopeOrigMaxSeq {
			notice("Llama 3 RoPE scaling with low %g, high %g, original context %d: llama.cpp gets the same frequencies, but importing this GGUF again gives other parameters with those frequencies",
				h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq)
		}
	case mlb.RopeYarn:
		add("rope.scaling.type", gguf.String("yarn"))
		add("rope.scaling.factor", gguf.Float32(h.RopeFactor))
		add("rope.scaling.original_context_length", gguf.Uint32(h.RopeOrigMaxSeq))
		add("rope.scaling.yarn_beta_fast", gguf.Float32(h.RopeLowFreqFactor))
		add("rope.scaling.yarn_beta_slow", gguf.Float32(h.RopeHighFreqFactor))
		ms := yarnMscale(float64(h.RopeFactor))
		if af := float64(h.RopeAttnFactor) / ms; float32(af) != 1 || float32(ms) != h.RopeAttnFactor {
			add("rope.scaling.attn_factor", gguf.Float32(float32(af)))
			if float32(float64(float32(af))*ms) != h.RopeAttnFactor {
				kvs = append(kvs, gguf.KV{Key: keyRopeAttn, Value: gguf.Float32(h.RopeAttnFactor)})
			}
		}
	default:
		return nil, nil, fmt.Errorf("RoPE type %d is not exported", h.RopeType)
	}
	if h.SlidingWindow != 0 {
		add("attention.sliding_window", gguf.Uint32(h.SlidingWindow))
		if arch == "llama" {
			notice("sliding window %d: llama.cpp's llama architecture attends to the whole context, so its output differs once a prompt is longer than the window", h.SlidingWindow)
		}
	}
	// Layer patterns llama.cpp fixes in code: check that the model has them.
	switch arch {
	case "gemma2", "gemma3", "smollm3":
		var want []uint8
		for l := range int(h.NLayers) {
			var fl uint8
			switch {
			case arch == "gemma2" && l%2 == 0:
				fl = mlb.FlagSliding
			case arch == "gemma3" && (l+1)%6 != 0:
				fl = mlb.FlagSliding | mlb.FlagLocalRoPE
			case arch == "smollm3" && (l+1)%4 == 0:
				fl = mlb.FlagNoRoPE
			}
			want = append(want, fl)
		}
		var got []uint8
		for l := range int(h.NLayers) {
			got = append(got, h.LayerFlag(l))
		}
		if !slices.Equal(got, want) {
			notice("layer pattern %v: llama.cpp's %s uses its fixed pattern %v, so its output differs", got, arch, want)
			kvs = append(kvs, gguf.KV{Key: keyLayerFlags, Value: gguf.Array(got)})
		}
	default:
		for l := range int(h.NLayers) {
			if h.LayerFlag(l)&^mlb.FlagSliding != 0 || h.LayerFlag(l) != h.LayerFlag(0) {
				return nil, nil, fmt.Errorf("per-layer flags %#x on layer %d have no %s equivalent", h.LayerFlag(l), l, arch)
			}
		}
	}
	if arch == "gemma3" {
		add("rope.freq_base_swa", gguf.Float32(h.RopeLocalTheta))
		if h.RopeLocalTheta != 10000 {
			notice("local RoPE base %g: llama.cpp releases before rope.freq_base_swa use 10000", h.RopeLocalTheta)
		}
	}
	if arch == "gemma2" {
		add("attn_logit_softcapping", gguf.Float32(h.AttnSoftcap))
		add("final_logit_softcapping", gguf.Float32(h.FinalSoftcap))
	} else if h.AttnSoftcap != 0 || h.FinalSoftcap != 0 {
		return nil, nil, fmt.Errorf("softcaps outside Gemma 2 have no %s equivalent", arch)
	}
	if strings.HasPrefix(arch, "gemma") {
		if want := float32(math.Sqrt(float64(h.Dim))); h.EmbedScale != want {
			notice("embedding scale %g: llama.cpp's %s multiplies by √dim = %g", h.EmbedScale, arch, want)
		}
		if arch != "gemma" {
			q := float64(h.HeadDimEff())
			if (arch == "gemma2" && h.NLayers == 46) || (arch == "gemma3" && h.NLayers == 62) {
				q = float64(h.Dim) / float64(h.NHeads)
			}
			if want := float32(1 / math.Sqrt(q)); h.AttnScale != want {
				notice("attention scale %g: llama.cpp's %s derives %g from the model size (query_pre_attn_scalar is not a GGUF key), so its output differs", h.AttnScale, arch, want)
				kvs = append(kvs, gguf.KV{Key: keyAttnScale, Value: gguf.Float32(h.AttnScale)})
			}
		}
	}
	if arch == "granite" {
		as := h.AttnScale
		if as == 0 {
			as = float32(1 / math.Sqrt(float64(h.HeadDimEff())))
		}
		es := h.EmbedScale
		if es == 0 {
			es = 1
		}
		// The residual and logit multipliers are already folded into wo,
		// w2 and the final norm.
		add("embedding_scale", gguf.Float32(es))
		add("attention.scale", gguf.Float32(as))
		add("residual_scale", gguf.Float32(1))
		add("logit_scale", gguf.Float32(1))
	}
	return kvs, freqs, nil
}

// exportTokenizer writes tokenizer.ggml.* and the chat templates.
// llama.cpp wants a token per embedding row: rows past the tokenizer's
// tokens get convert_hf_to_gguf's placeholders "[PAD<id>]" of type unused,
// which an import drops again.
func exportTokenizer(t *mlt.Tokenizer, vocab int, notice func(string, ...any)) ([]gguf.KV, error) {
	pipePre := ""
	if p := t.Pipeline; p != nil {
		for name, rx := range ggufPreRegex {
			if len(p.Normalizers) == 0 && len(p.PreTokenizers) == 2 && p.PreTokenizers[0] == mlt.SplitRegex(rx.re) &&
				p.PreTokenizers[1] == (mlt.Step{Op: mlt.OpByteLevel}) && t.Kind == mlt.KindByteLevel {
				pipePre = name
			}
		}
		if pipePre == "" {
			return nil, errors.New("its pipeline section (normalizers and pre-tokenizers) matches no llama.cpp pre-tokenizer")
		}
		if pipePre == "gpt-4o" {
			notice("llama.cpp's gpt-4o pre-tokenizer rewrites the o200k regex's letter classes: it does not join combining marks (\\p{M}) to letters, nor split a non-ASCII lower-to-upper case change, so on such text (Devanagari, Thai, ...) its tokens can differ from krafla's and Hugging Face's")
		}
		// llama.cpp fixes ignore_merges per pre type; where the tokenizer's
		// differs, the two tokenize alike only if the merges build every
		// token from its bytes (gpt-oss's do; Llama 3's do not).
		if im := ggufPreRegex[pipePre].flags & mlt.FlagIgnoreMerges; t.Flags&mlt.FlagIgnoreMerges != im {
			if u := t.UnmergedTokens(); len(u) > 0 {
				return nil, fmt.Errorf("its pre-tokenizer is llama.cpp's %q, which %s merges, but %d tokens (the first %d %q) are not built by the merges from their bytes, so llama.cpp would tokenize them otherwise",
					pipePre, map[bool]string{true: "ignores", false: "does not ignore"}[im != 0], len(u), u[0], t.Tokens[u[0]].Bytes)
			}
		}
	}
	n := len(t.Tokens)
	toks := make([]string, max(n, vocab))
	types := make([]int32, max(n, vocab))
	for i := n; i < vocab; i++ {
		toks[i], types[i] = padToken(i), ggufTokUnused
	}
	var kvs []gguf.KV
	add := func(k string, v gguf.Value) { kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml." + k, Value: v}) }
	switch t.Kind {
	case mlt.KindSentencePiece:
		add("model", gguf.String("llama"))
		// llama.cpp's SPM tokenizer merges the pair whose merged piece has
		// the highest score: score -rank reproduces the merge order.
		scores := make([]float32, len(toks))
		for i := range scores {
			scores[i] = -float32(len(t.Merges) + 1)
		}
		for r := len(t.Merges) - 1; r >= 0; r-- {
			scores[t.Merges[r][2]] = -float32(r)
		}
		for i, tok := range t.Tokens {
			switch tok.Attr {
			case mlt.AttrByte:
				toks[i], types[i] = fmt.Sprintf("<0x%02X>", tok.Bytes[0]), ggufTokByte
				scores[i] = 0
			case mlt.AttrAdded:
				toks[i], types[i] = string(tok.Bytes), ggufTokControl
				if toks[i] == "<unk>" {
					types[i] = ggufTokUnknown
				}
				scores[i] = 0
			default:
				toks[i], types[i] = string(tok.Bytes), ggufTokNormal
			}
		}
		add("tokens", gguf.Array(toks))
		add("scores", gguf.Array(scores))
		add("token_type", gguf.Array(types))
		add("add_space_prefix", gguf.Bool(t.Flags&mlt.FlagNoPrefix == 0))
		if t.Flags&mlt.FlagPrefixOnce != 0 {
			notice("the tokenizer puts ▁ only at the start of the text (Metaspace \"first\"); llama.cpp puts it after every special token too")
		}
	case mlt.KindByteLevel:
		add("model", gguf.String("gpt2"))
		pre := pipePre
		fl := t.Flags &^ (mlt.FlagAddBOS | mlt.FlagChat | mlt.FlagPost | mlt.FlagEmbed | mlt.FlagPair)
		for _, name := range []string{"llama-bpe", "dbrx", "qwen2", "qwen35", "gpt-2", "refact"} {
			if ggufPreFlags[name] == fl && pre == "" {
				pre = name
			}
		}
		if pre == "" {
			return nil, fmt.Errorf("byte-level flags %v have no llama.cpp pre-tokenizer", mlt.FlagNames(fl))
		}
		add("pre", gguf.String(pre))
		for i, tok := range t.Tokens {
			if tok.Attr == mlt.AttrNormal {
				toks[i], types[i] = byteLevelEncode(tok.Bytes), ggufTokNormal
			} else {
				toks[i], types[i] = string(tok.Bytes), ggufTokControl
			}
		}
		merges := make([]string, len(t.Merges))
		for i, m := range t.Merges {
			merges[i] = toks[m[0]] + " " + toks[m[1]]
		}
		add("tokens", gguf.Array(toks))
		add("token_type", gguf.Array(types))
		add("merges", gguf.Array(merges))
	default:
		return nil, fmt.Errorf("tokenizer kind %v is not exported", t.Kind)
	}
	if t.BOS >= 0 {
		add("bos_token_id", gguf.Uint32(uint32(t.BOS)))
	}
	if t.EOS >= 0 {
		add("eos_token_id", gguf.Uint32(uint32(t.EOS)))
	}
	addBOS, addEOS, err := ggufAddSpecial(t)
	if err != nil {
		return nil, err
	}
	add("add_bos_token", gguf.Bool(addBOS))
	add("add_eos_token", gguf.Bool(addEOS))
	if c := t.Chat; c != nil {
		for _, id := range c.StopIDs {
			if id != t.EOS {
				add("eot_token_id", gguf.Uint32(uint32(id)))
				break
			}
		}
		for _, tp := range c.Templates {
			k := "tokenizer.chat_template"
			if tp.Name != "default" {
				k += "." + tp.Name
			}
			kvs = append(kvs, gguf.KV{Key: k, Value: gguf.String(tp.Source)})
		}
	}
	return kvs, nil
}

// ggufAddSpecial maps the tokenizer's special tokens around a text onto
// llama.cpp's add_bos_token and add_eos_token: flag 1, or a post-processor
// template of BOS (optional), the text and EOS (optional), as
// Qwen3-Embedding's. Another template has no llama.cpp equivalent.
func ggufAddSpecial(t *mlt.Tokenizer) (bos, eos bool, err error) {
	if t.Post == nil {
		return t.Flags&mlt.FlagAddBOS != 0, false, nil
	}
	items := t.Post.Single
	if len(items) > 0 && items[0].Seq == mlt.PostSpecial && len(items[0].IDs) == 1 && items[0].IDs[0] == t.BOS && t.BOS >= 0 {
		bos, items = true, items[1:]
	}
	if n := len(items); n > 0 && items[n-1].Seq == mlt.PostSpecial && len(items[n-1].IDs) == 1 && items[n-1].IDs[0] == t.EOS && t.EOS >= 0 {
		eos, items = true, items[:n-1]
	}
	if len(items) != 1 || items[0].Seq != mlt.PostSeqA {
		return false, false, fmt.Errorf("the tokenizer's post-processor template (special tokens other than one BOS before and one EOS after the text) has no llama.cpp equivalent")
	}
	return bos, eos, nil
}
