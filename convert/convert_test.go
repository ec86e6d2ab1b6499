package convert

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// refArch describes, independently of the converter's tables, how the
// checkpoints hfgen writes are laid out (ARCHITECTURES.md sections 2 and 6).
type refArch struct {
	prefix   string
	normPlus bool // +1 on every norm (not linear_attn.norm)
	sandwich bool // Gemma 2/3 norm names
	fused    bool // Phi-3
	gated    bool // Qwen3.5 q_proj with per-head gate; layer 0 linear
	residual float32
	logits   float32
}

var refArchs = map[string]refArch{
	"llama": {}, "llama3": {}, "llama-linear": {}, "llama-yarn": {}, "mistral": {}, "qwen2": {}, "qwen3": {},
	"smollm3": {}, "phi3": {fused: true},
	"gemma": {normPlus: true}, "gemma2": {normPlus: true, sandwich: true}, "gemma3": {normPlus: true, sandwich: true},
	"gemma3-mm": {prefix: "language_model.model.", normPlus: true, sandwich: true},
	"qwen3_5":   {prefix: "model.language_model.", normPlus: true, gated: true},
	"granite":   {residual: 0.22, logits: 8},
}

// interleave rewrites the rows of one head from rotate-half order to
// interleaved pairs: the first rot/2 rows go to even positions, the next
// rot/2 to odd positions, the rest stay.
func interleave(rows [][]float32, rot int) [][]float32 {
	out := append([][]float32(nil), rows...)
	for i := 0; i < rot/2; i++ {
		out[2*i] = rows[i]
		out[2*i+1] = rows[rot/2+i]
	}
	return out
}

// permHeads applies interleave to each head of hd rows.
func permHeads(rows [][]float32, hd, rot int) [][]float32 {
	var out [][]float32
	for h := 0; h < len(rows)/hd; h++ {
		out = append(out, interleave(rows[h*hd:(h+1)*hd], rot)...)
	}
	return out
}

func splitRows(v []float32, cols int) [][]float32 {
	var r [][]float32
	for i := 0; i < len(v); i += cols {
		r = append(r, v[i:i+cols])
	}
	return r
}

func flat(rows [][]float32, f func(float32) float32) []float32 {
	var v []float32
	for _, r := range rows {
		for _, x := range r {
			if f != nil {
				x = f(x)
			}
			v = append(v, x)
		}
	}
	return v
}

// expected returns every output tensor computed from the checkpoint's
// source tensors with the documented transforms.
func expected(t *testing.T, ck *Checkpoint, ra refArch, h *mlb.Header) map[string][]float32 {
	if ra.prefix == "" {
		ra.prefix = "model."
	}
	src := func(name string) []float32 {
		tn := ck.Tensors[ra.prefix+name]
		if tn == nil {
			tn = ck.Tensors[name]
		}
		if tn == nil {
			t.Fatalf("source %s missing", name)
		}
		v, err := tn.F32()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	dim := int(h.Dim)
	hd := h.HeadDimEff()
	rot := h.RotDimEff()
	qd, kvd, hid := h.QDim(), h.KVDim(), h.FFNDim() // hid: the checkpoint's FFN width
	add := float32(0)
	if ra.normPlus {
		add = 1
	}
	norm := func(v []float32) []float32 { return flat([][]float32{v}, func(x float32) float32 { return x + add }) }
	res := ra.residual
	if res == 0 {
		res = 1
	}
	scale := func(x float32) float32 { return x * res }
	want := map[string][]float32{"tok_emb": src("embed_tokens.weight")}
	for l := 0; l < int(h.NLayers); l++ {
		b, o := fmt.Sprintf("layers.%d.", l), fmt.Sprintf("blk.%d.", l)
		want[o+"attn_norm"] = norm(src(b + "input_layernorm.weight"))
		if h.LayerFlag(l)&mlb.FlagLinear != 0 {
			a := b + "linear_attn."
			for _, m := range [][2]string{{"lqkv", "in_proj_qkv.weight"}, {"lz", "in_proj_z.weight"}, {"lb", "in_proj_b.weight"},
				{"la", "in_proj_a.weight"}, {"lconv", "conv1d.weight"}, {"dt_bias", "dt_bias"}, {"A_log", "A_log"},
				{"lnorm", "norm.weight"}, {"lout", "out_proj.weight"}} {
				want[o+m[0]] = src(a + m[1])
			}
		} else {
			a := b + "self_attn."
			var q, k, v [][]float32
			switch {
			case ra.fused:
				qkv := splitRows(src(a+"qkv_proj.weight"), dim)
				q, k, v = qkv[:qd], qkv[qd:qd+kvd], qkv[qd+kvd:]
			case ra.gated:
				qg := splitRows(src(a+"q_proj.weight"), dim)
				var g [][]float32
				for hh := 0; hh < int(h.NHeads); hh++ {
					q = append(q, qg[2*hh*hd:2*hh*hd+hd]...)
					g = append(g, qg[2*hh*hd+hd:2*hh*hd+2*hd]...)
				}
				want[o+"wg"] = flat(g, nil)
			default:
				q = splitRows(src(a+"q_proj.weight"), dim)
			}
			if !ra.fused {
				k, v = splitRows(src(a+"k_proj.weight"), dim), splitRows(src(a+"v_proj.weight"), dim)
			}
			want[o+"wq"] = flat(permHeads(q, hd, rot), nil)
			want[o+"wk"] = flat(permHeads(k, hd, rot), nil)
			want[o+"wv"] = flat(v, nil)
			want[o+"wo"] = flat(splitRows(src(a+"o_proj.weight"), qd), scale)
			if h.QKVBias != 0 {
				want[o+"bq"] = flat(permHeads(splitRows(src(a+"q_proj.bias"), 1), hd, rot), nil)
				want[o+"bk"] = flat(permHeads(splitRows(src(a+"k_proj.bias"), 1), hd, rot), nil)
				want[o+"bv"] = src(a + "v_proj.bias")
			}
			if h.QKNorm != 0 {
				want[o+"q_norm"] = flat(permHeads(splitRows(norm(src(a+"q_norm.weight")), 1), hd, rot), nil)
				want[o+"k_norm"] = flat(permHeads(splitRows(norm(src(a+"k_norm.weight")), 1), hd, rot), nil)
			}
		}
		if ra.sandwich {
			want[o+"post_attn_norm"] = norm(src(b + "post_attention_layernorm.weight"))
			want[o+"ffn_norm"] = norm(src(b + "pre_feedforward_layernorm.weight"))
			want[o+"post_ffn_norm"] = norm(src(b + "post_feedforward_layernorm.weight"))
		} else {
			want[o+"ffn_norm"] = norm(src(b + "post_attention_layernorm.weight"))
		}
		if ra.fused {
			gu := src(b + "mlp.gate_up_proj.weight")
			want[o+"w1"], want[o+"w3"] = gu[:hid*dim], gu[hid*dim:]
		} else {
			want[o+"w1"], want[o+"w3"] = src(b+"mlp.gate_proj.weight"), src(b+"mlp.up_proj.weight")
		}
		want[o+"w2"] = flat(splitRows(src(b+"mlp.down_proj.weight"), hid), scale)
		// A padded FFN: zero rows of w1 and w3 up to hidden_dim, zero columns of w2.
		if ph := int(h.HiddenDim); ph != hid {
			want[o+"w1"] = append(want[o+"w1"], make([]float32, (ph-hid)*dim)...)
			want[o+"w3"] = append(want[o+"w3"], make([]float32, (ph-hid)*dim)...)
			var w2 []float32
			for _, r := range splitRows(want[o+"w2"], hid) {
				w2 = append(append(w2, r...), make([]float32, ph-hid)...)
			}
			want[o+"w2"] = w2
		}
	}
	fn := norm(src("norm.weight"))
	if ra.logits != 0 {
		for i := range fn {
			fn[i] /= ra.logits
		}
	}
	want["final_norm"] = fn
	if h.SharedClassifier == 0 {
		want["wcls"] = src("lm_head.weight")
	}
	return want
}

// checkTensors compares every tensor of f with want: F32 exactly (up to
// one rounding), quantized within the bound of its rule.
func checkTensors(t *testing.T, f *mlb.File, want map[string][]float32) {
	t.Helper()
	seen := 0
	for i := range f.Tensors {
		ft := &f.Tensors[i]
		if ft.Type == mlb.U8 {
			continue
		}
		w, ok := want[ft.Name]
		if !ok {
			t.Errorf("%s: unexpected tensor", ft.Name)
			continue
		}
		seen++
		var got []float32
		bound := func(amax float32) float32 { return 1e-6 * (1 + amax) }
		switch ft.Type {
		case mlb.F32:
			got = ft.F32
		case mlb.Q8_0:
			got = quantize.Dequantize(quantize.TypeQ8_0, ft.Q, ft.D, ft.Rows, ft.Cols)
			bound = func(amax float32) float32 { return amax/127*0.5001 + 1e-7 }
		case mlb.Q4_0:
			got = quantize.Dequantize(quantize.TypeQ4_0, ft.Q, ft.D, ft.Rows, ft.Cols)
			bound = func(amax float32) float32 { return amax / 4 }
		}
		if len(got) != len(w) {
			t.Errorf("%s: got %d values, want %d", ft.Name, len(got), len(w))
			continue
		}
		for b0 := 0; b0 < len(w); b0 += 32 {
			b1 := min(len(w), b0+32)
			var amax float32
			for _, x := range w[b0:b1] {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			lim := bound(amax)
			for i := b0; i < b1; i++ {
				if d := float32(math.Abs(float64(got[i] - w[i]))); !(d <= lim) {
					t.Fatalf("%s[%d] (%v): got %v, want %v (bound %v)", ft.Name, i, ft.Type, got[i], w[i], lim)
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("got %d tensors, want %d", seen, len(want))
	}
}

func convertArch(t *testing.T, arch string, gen hfgen.Options, opt Options) (*Checkpoint, *mlb.File, *Report) {
	t.Helper()
	dir := t.TempDir()
	if err := hfgen.Write(dir, arch, gen); err != nil {
		t.Fatal(err)
	}
	if opt.Out == "" {
		opt.Out = filepath.Join(t.TempDir(), "out.mlb")
	}
	rep, err := Convert(context.Background(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	f, err := mlb.Open(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	return ck, f, rep
}

func TestConvertEveryArch(t *testing.T) {
	for _, arch := range hfgen.Archs {
		t.Run(arch, func(t *testing.T) {
			ra, ok := refArchs[arch]
			if !ok {
				t.Fatalf("no reference description for %s", arch)
			}
			ck, f, _ := convertArch(t, arch, hfgen.Options{Seed: 3}, Options{NoTokenizer: true})
			checkTensors(t, f, expected(t, ck, ra, &f.Header))
		})
	}
}

func TestConvertQ4AndDTypes(t *testing.T) {
	tests := []struct {
		arch, dtype string
		opt         Options
	}{
		{"llama", "f32", Options{Type: quantize.TypeQ4_0}},
		{"qwen3_5", "f16", Options{Type: quantize.TypeQ4_0, Q8Mask: mlb.MaskTokEmb | mlb.MaskW2, F16Scales: true}},
		{"gemma3", "bf16", Options{Type: quantize.TypeQ4_0, Threads: 3}},
		{"phi3", "f16", Options{F16Scales: true}},
	}
	for _, tc := range tests {
		t.Run(tc.arch+"/"+tc.dtype, func(t *testing.T) {
			tc.opt.NoTokenizer = true
			ck, f, rep := convertArch(t, tc.arch, hfgen.Options{Seed: 5, DType: tc.dtype, Shards: 2}, tc.opt)
			checkTensors(t, f, expected(t, ck, refArchs[tc.arch], &f.Header))
			if got, want := f.Header.WType, uint32(max(1, tc.opt.Type)); got != want {
				t.Errorf("wtype: got %d, want %d", got, want)
			}
			if got := f.Header.ScaleF16 == 1; got != tc.opt.F16Scales {
				t.Errorf("scale_f16: got %v, want %v", got, tc.opt.F16Scales)
			}
			if tc.arch == "gemma3" && rep.Q4Rule != "round" {
				t.Errorf("gemma3 default q4 rule: got %q, want round", rep.Q4Rule)
			}
			if tc.arch == "llama" && rep.Q4Rule != "best" {
				t.Errorf("llama default q4 rule: got %q, want best", rep.Q4Rule)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	inv := func(x float64) float32 { return float32(1 / math.Sqrt(x)) }
	tests := []struct {
		arch  string
		check func(h *mlb.Header) string
	}{
		{"llama", func(h *mlb.Header) string {
			return cmp(h.RopeTheta, 10000, h.NormEps, float32(1e-5), h.SharedClassifier, 0, h.HeadDim, 0, h.RopeType, 0,
				h.MaxSeq, 256, h.Vocab, 320, h.NKVHeads, 2, h.LayerFlags, 0)
		}},
		{"llama3", func(h *mlb.Header) string {
			return cmp(h.RopeType, 1, h.RopeFactor, 32, h.RopeLowFreqFactor, 1, h.RopeHighFreqFactor, 4, h.RopeOrigMaxSeq, 8192,
				h.SharedClassifier, 1, h.RopeTheta, 500000)
		}},
		{"llama-linear", func(h *mlb.Header) string { return cmp(h.RopeType, 2, h.RopeFactor, 2) }},
		{"llama-yarn", func(h *mlb.Header) string {
			return cmp(h.RopeType, 3, h.RopeFactor, 4, h.RopeLowFreqFactor, 32, h.RopeHighFreqFactor, 1, h.RopeOrigMaxSeq, 64,
				h.RopeAttnFactor, float32(0.1*math.Log(4)+1))
		}},
		{"mistral", func(h *mlb.Header) string { return cmp(h.SlidingWindow, 32, h.HeadDim, 32, h.LayerFlags, 0) }},
		{"qwen2", func(h *mlb.Header) string {
			return cmp(h.QKVBias, 1, h.SharedClassifier, 1, h.SlidingWindow, 0, h.RopeTheta, 1e6, h.NormEps, float32(1e-6))
		}},
		{"qwen3", func(h *mlb.Header) string { return cmp(h.QKNorm, 1, h.HeadDim, 32, h.QKVBias, 0) }},
		{"smollm3", func(h *mlb.Header) string {
			return cmp(h.LayerFlags, 1, h.Flags[0], 0, h.Flags[1], mlb.FlagNoRoPE, h.RopeTheta, 2e6, h.SharedClassifier, 1)
		}},
		{"gemma", func(h *mlb.Header) string {
			return cmp(h.Act, 1, h.EmbedScale, 8, h.NKVHeads, 1, h.AttnScale, 0, h.PostNorms, 0, h.SharedClassifier, 1)
		}},
		{"gemma2", func(h *mlb.Header) string {
			return cmp(h.PostNorms, 1, h.AttnScale, inv(24), h.AttnSoftcap, 50, h.FinalSoftcap, 30, h.SlidingWindow, 32,
				h.Flags[0], mlb.FlagSliding, h.Flags[1], 0, h.RopeLocalTheta, 0)
		}},
		{"gemma3", func(h *mlb.Header) string {
			return cmp(h.Flags[0], mlb.FlagSliding|mlb.FlagLocalRoPE, h.Flags[1], 0, h.RopeLocalTheta, 10000, h.RopeTheta, 1e6,
				h.RopeType, 2, h.RopeFactor, 8, h.QKNorm, 1, h.AttnScale, inv(16), h.AttnSoftcap, 0, h.FinalSoftcap, 0)
		}},
		{"gemma3-mm", func(h *mlb.Header) string {
			// Class defaults: query_pre_attn_scalar 256, eps 1e-6, rope 1e6 / 1e4, pattern 6.
			return cmp(h.Flags[0], mlb.FlagSliding|mlb.FlagLocalRoPE, h.Flags[1], mlb.FlagSliding|mlb.FlagLocalRoPE,
				h.AttnScale, inv(256), h.NormEps, float32(1e-6), h.RopeTheta, 1e6, h.RopeLocalTheta, 1e4, h.SharedClassifier, 1,
				h.HeadDim, 0, h.EmbedScale, 8)
		}},
		{"qwen3_5", func(h *mlb.Header) string {
			return cmp(h.Flags[0], mlb.FlagLinear, h.Flags[1], 0, h.AttnGate, 1, h.RotDim, 4, h.LinKHeads, 2, h.LinVHeads, 4,
				h.LinKDim, 16, h.LinVDim, 16, h.LinConv, 4, h.RopeTheta, 1e7, h.QKNorm, 1, h.SharedClassifier, 0)
		}},
		{"phi3", func(h *mlb.Header) string {
			return cmp(h.SlidingWindow, 48, h.NormEps, float32(1e-5), h.SharedClassifier, 0)
		}},
		{"granite", func(h *mlb.Header) string {
			return cmp(h.EmbedScale, 12, h.AttnScale, 0.0078125, h.SharedClassifier, 1, h.RopeTheta, 1e7)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.arch, func(t *testing.T) {
			_, f, _ := convertArch(t, tc.arch, hfgen.Options{}, Options{NoTokenizer: true})
			if msg := tc.check(&f.Header); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// cmp compares pairs (got, want), converting want to got's type.
func cmp(pairs ...any) string {
	var bad []string
	for i := 0; i < len(pairs); i += 2 {
		g, w := pairs[i], pairs[i+1]
		var ok bool
		switch gv := g.(type) {
		case uint32:
			ok = float64(gv) == toF(w)
		case uint8:
			ok = float64(gv) == toF(w)
		case float32:
			ok = gv == float32(toF(w))
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("pair %d: got %v, want %v", i/2, g, w))
		}
	}
	return strings.Join(bad, "; ")
}

func toF(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	case float32:
		return float64(x)
	case uint32:
		return float64(x)
	case uint8:
		return float64(x)
	}
	panic(fmt.Sprintf("toF %T", v))
}
