package convert

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
)

// synthMLB converts a synthesised checkpoint of arch with f16 scales.
func synthMLB(t *testing.T, arch string, opt Options) string {
	t.Helper()
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, arch, hfgen.Options{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	opt.Out, opt.F16Scales = filepath.Join(dir, arch+".mlb"), true
	if _, err := Convert(context.Background(), ck, opt); err != nil {
		t.Fatal(err)
	}
	return opt.Out
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGGUFRoundTrip: .mlb → GGUF → .mlb is bit-identical for f16-scaled
// files of every architecture both formats hold (the .mlt too), and
// GGUF → .mlb → GGUF gives the same GGUF.
func TestGGUFRoundTrip(t *testing.T) {
	cases := []struct {
		arch, want string
		opt        Options
	}{
		{"llama", "llama", Options{}}, {"llama3", "llama", Options{}}, {"llama-linear", "llama", Options{}},
		{"llama-yarn", "llama", Options{}}, {"mistral", "llama", Options{}}, {"qwen2", "qwen2", Options{}}, {"qwen3", "qwen3", Options{}},
		{"smollm3", "smollm3", Options{}}, {"gemma", "gemma", Options{}}, {"gemma2", "gemma2", Options{}},
		{"gemma3", "gemma3", Options{}}, {"phi3", "llama", Options{}}, {"granite", "granite", Options{}},
		{"qwen3", "qwen3", Options{Type: quantize.TypeQ4_0, Q8Mask: mlb.MaskTokEmb | mlb.MaskW2}},
		{"gemma3", "gemma3", Options{Type: quantize.TypeQ4_0}},
	}
	for _, c := range cases {
		t.Run(c.arch+"-"+quantize.Type(max(c.opt.Type, 1)).String(), func(t *testing.T) {
			in := synthMLB(t, c.arch, c.opt)
			dir := filepath.Dir(in)
			g := filepath.Join(dir, "m.gguf")
			rep, err := ExportGGUF(in, g, ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Arch != c.want {
				t.Errorf("exported as %s, want %s", rep.Arch, c.want)
			}
			back := filepath.Join(dir, "back.mlb")
			if _, err := ConvertGGUF(context.Background(), g, Options{Out: back}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, in), readFile(t, back)) {
				t.Error(".mlb → GGUF → .mlb differs")
			}
			if !bytes.Equal(readFile(t, TokenizerPath(in)), readFile(t, TokenizerPath(back))) {
				t.Error(".mlt → GGUF → .mlt differs")
			}
			g2 := filepath.Join(dir, "m2.gguf")
			if _, err := ExportGGUF(back, g2, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, g), readFile(t, g2)) {
				t.Error("GGUF → .mlb → GGUF differs")
			}
		})
	}
}

// TestGGUFExportBlocks checks the exported blocks against the .mlb's arrays
// directly: a ggml Q8_0 block is the f16 scale then the 32 quants, Q4_0 the
// scale then 16 bytes of nibbles in the same order as SPEC.md's.
func TestGGUFExportBlocks(t *testing.T) {
	in := synthMLB(t, "llama", Options{Type: quantize.TypeQ4_0, Q8Mask: mlb.MaskW2})
	g := filepath.Join(filepath.Dir(in), "m.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := mlb.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, err := gguf.Open(g)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct{ mlb, gguf string }{{"blk.0.w1", "blk.0.ffn_gate.weight"}, {"blk.1.w2", "blk.1.ffn_down.weight"}} {
		mt, gt := m.Tensor(c.mlb), f.Tensor(c.gguf)
		qb := 34
		if mt.Type == mlb.Q4_0 {
			qb = 18
		}
		if gt.Type.BlockBytes() != qb || len(gt.Data) != len(mt.D)*qb {
			t.Fatalf("%s: type %s, %d bytes", c.gguf, gt.Type, len(gt.Data))
		}
		for b := range mt.D {
			blk := gt.Data[b*qb : (b+1)*qb]
			if got := float16frombits(blk[0], blk[1]); got != mt.D[b] {
				t.Fatalf("%s block %d: scale %v, want %v", c.gguf, b, got, mt.D[b])
			}
			if !bytes.Equal(blk[2:], mt.Q[b*(qb-2):(b+1)*(qb-2)]) {
				t.Fatalf("%s block %d: quants differ", c.gguf, b)
			}
		}
		// ggml's dequantizer gives the .mlb's weights, (q)·d and (n−8)·d.
		vals := make([]float32, len(mt.D)*32)
		if err := gguf.Dequantize(gt.Type, gt.Data, vals); err != nil {
			t.Fatal(err)
		}
		qt := quantize.TypeQ8_0
		if mt.Type == mlb.Q4_0 {
			qt = quantize.TypeQ4_0
		}
		want := quantize.Dequantize(qt, mt.Q, mt.D, mt.Rows, mt.Cols)
		for i := range want {
			if vals[i] != want[i] {
				t.Fatalf("%s: value %d is %v, want %v", c.gguf, i, vals[i], want[i])
			}
		}
	}
}

func float16frombits(lo, hi byte) float32 {
	var d [1]float32
	gguf.Dequantize(gguf.F16, []byte{lo, hi}, d[:])
	return d[0]
}

// TestGGUFStories260K converts the real llama.cpp test model: its tensors
// must equal those of the Hugging Face checkpoint made from the same weights
// (README: q/k permuted to rotate-half, which convert permutes back), and its
// tokenizer must equal that checkpoint's tokenizer.json converted (merges
// derived from the scores as SentencePieceExtractor does).
func TestGGUFStories260K(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	hf := testenv.Model(t, "stories260K")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "gguf.mlb"), filepath.Join(dir, "hf.mlb")
	rep, err := ConvertGGUF(context.Background(), src, Options{Out: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), hf, Options{Out: b}); err != nil {
		t.Fatal(err)
	}
	if rep.Header.TrueHiddenDim != 172 || rep.Header.HiddenDim != 192 || rep.Header.SharedClassifier != 1 {
		t.Errorf("header: hidden %d (true %d), shared %d; want 192 (172), 1", rep.Header.HiddenDim, rep.Header.TrueHiddenDim, rep.Header.SharedClassifier)
	}
	fa, err := mlb.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := mlb.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	for i := range fb.Tensors {
		tb := &fb.Tensors[i]
		ta := fa.Tensor(tb.Name)
		if ta == nil || !float32sEqual(ta.F32, tb.F32) || !bytes.Equal(ta.Q, tb.Q) || !float32sEqual(ta.D, tb.D) {
			t.Errorf("tensor %s differs from the Hugging Face conversion's", tb.Name)
		}
	}
	ta, err := mlt.Open(TokenizerPath(a))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := mlt.Open(TokenizerPath(b))
	if err != nil {
		t.Fatal(err)
	}
	// Each import writes a bound pair: the model's pair_id is its
	// tokenizer's. The two models differ (the import has f16 scales), so
	// their pair ids do; the tokenizers must be the same apart from that.
	for _, c := range []struct {
		f   *mlb.File
		tok *mlt.Tokenizer
	}{{fa, ta}, {fb, tb}} {
		if c.f.Header.PairVersion != 1 || c.f.Header.PairID != c.tok.Pair {
			t.Errorf("%s: pair record %d %x, its tokenizer's %x; want the same id", c.f.Path, c.f.Header.PairVersion, c.f.Header.PairID, c.tok.Pair)
		}
	}
	if ta.Pair == tb.Pair {
		t.Error("the GGUF import and the Hugging Face conversion are different models with one pair id")
	}
	if !bytes.Equal(ta.BytesWithoutPair(), tb.BytesWithoutPair()) {
		t.Errorf("tokenizer differs from tokenizer.json's: %d merges vs %d, flags %d vs %d", len(ta.Merges), len(tb.Merges), ta.Flags, tb.Flags)
	}
}

func float32sEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// rewriteGGUF copies the GGUF at src to dst with edit applied to its
// metadata and tensors (edit may change types and data).
func rewriteGGUF(t *testing.T, src, dst string, edit func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte)) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kvs := append([]gguf.KV(nil), f.KVs...)
	var ts []gguf.TensorInfo
	var data [][]byte
	for _, x := range f.Tensors {
		ts = append(ts, x.TensorInfo)
		data = append(data, append([]byte(nil), x.Data...))
	}
	kvs, ts, data = edit(kvs, ts, data)
	w, err := gguf.Create(dst, kvs, ts)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range w.Tensors() {
		if err := w.WriteTensor(ti.Name, data[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGGUFRequantized: tensors of other ggml types are dequantized as ggml
// does and quantized with krafla's rules, and the report names them.
func TestGGUFRequantized(t *testing.T) {
	in := synthMLB(t, "llama", Options{})
	dir := filepath.Dir(in)
	g := filepath.Join(dir, "m.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	// blk.0.ffn_up.weight as Q5_0 with a known pattern: block b's values are
	// (n−16)·d with d = 1/64, n cycling through 0..31.
	q5 := filepath.Join(dir, "q5.gguf")
	var want []float32
	rewriteGGUF(t, g, q5, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range ts {
			if ts[i].Name != "blk.0.ffn_up.weight" {
				continue
			}
			n := int(ts[i].Shape[0] * ts[i].Shape[1])
			ts[i].Type = gguf.Q5_0
			var b []byte
			for blk := 0; blk < n/32; blk++ {
				var qs [16]byte
				var qh uint32
				vals := make([]float32, 32)
				for j := range 32 {
					v := (j + blk) % 32
					vals[j] = float32(v-16) / 64
					if j < 16 {
						qs[j] |= byte(v & 15)
					} else {
						qs[j-16] |= byte(v&15) << 4
					}
					if v&16 != 0 {
						qh |= 1 << j
					}
				}
				want = append(want, vals...)
				b = append(b, 0x00, 0x24) // f16 1/64
				b = append(b, byte(qh), byte(qh>>8), byte(qh>>16), byte(qh>>24))
				b = append(b, qs[:]...)
			}
			data[i] = b
		}
		return kvs, ts, data
	})
	var log bytes.Buffer
	out := filepath.Join(dir, "q5.mlb")
	rep, err := ConvertGGUF(context.Background(), q5, Options{Out: out, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "lost precision: 1 tensors dequantized from Q5_0 and requantized to Q8_0: blk.0.ffn_up.weight") || len(rep.Warnings) == 0 {
		t.Errorf("log %q lacks the lost-precision line", log.String())
	}
	f, err := mlb.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w3 := f.Tensor("blk.0.w3")
	q, s, err := quantize.Matrix(quantize.TypeQ8_0, want, w3.Rows, w3.Cols, quantize.Options{F16Scales: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q, w3.Q) || !float32sEqual(quantize.DecodeScales(s, true), w3.D) {
		t.Error("blk.0.w3 is not the Q8_0 quantization of the Q5_0 values")
	}
}

// TestGGUFRefusals: what does not fit is refused by name.
func TestGGUFRefusals(t *testing.T) {
	in := synthMLB(t, "llama", Options{})
	dir := filepath.Dir(in)
	g := filepath.Join(dir, "m.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	setKV := func(key string, v gguf.Value) func([]gguf.KV, []gguf.TensorInfo, [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		return func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
			for i := range kvs {
				if kvs[i].Key == key {
					kvs[i].Value = v
					return kvs, ts, data
				}
			}
			return append(kvs, gguf.KV{Key: key, Value: v}), ts, data
		}
	}
	for _, c := range []struct {
		name string
		edit func([]gguf.KV, []gguf.TensorInfo, [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte)
		want string
	}{
		{"moe arch", setKV("general.architecture", gguf.String("qwen3moe")), "architecture qwen3moe does not fit the .mlb format: mixture of experts"},
		{"unknown arch", setKV("general.architecture", gguf.String("rwkv7")), `GGUF architecture "rwkv7" is not supported`},
		{"experts", setKV("llama.expert_count", gguf.Uint32(8)), "8 experts: mixture of experts"},
		{"pre", setKV("tokenizer.ggml.pre", gguf.String("deepseek-llm")), `pre-tokenizer "deepseek-llm"`},
		{"rope", setKV("llama.rope.scaling.type", gguf.String("longrope")), `RoPE scaling "longrope" is not imported`},
		{"IQ type", func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
			for i := range ts {
				if ts[i].Name == "blk.0.ffn_up.weight" {
					ts[i].Type = gguf.IQ4_NL // 18 bytes per 32 like Q4_0
					data[i] = make([]byte, int(ts[i].Shape[0]*ts[i].Shape[1])/32*18)
				}
			}
			return kvs, ts, data
		}, "tensor type IQ4_NL cannot be dequantized"},
		{"extra tensor", func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
			return kvs, append(ts, gguf.TensorInfo{Name: "blk.0.ffn_gate_exps.weight", Type: gguf.F32, Shape: []uint64{4}}), append(data, make([]byte, 16))
		}, `tensor "blk.0.ffn_gate_exps.weight" not used by the mapping`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.gguf")
			rewriteGGUF(t, g, p, c.edit)
			_, err := ConvertGGUF(context.Background(), p, Options{Out: filepath.Join(dir, "bad.mlb")})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "bad.mlb")); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused conversion left an output")
			}
		})
	}
	// A file that is not valid GGUF: the reader's error.
	bad := filepath.Join(dir, "trunc.gguf")
	os.WriteFile(bad, readFile(t, g)[:100], 0o644)
	if _, err := ConvertGGUF(context.Background(), bad, Options{Out: filepath.Join(dir, "x.mlb")}); !errors.Is(err, gguf.ErrFormat) {
		t.Errorf("truncated file: got %v, want gguf.ErrFormat", err)
	}
}

// TestLlama3Factors checks the rope_freqs factors against values computed by
// hand from convert_hf_to_gguf's formula for Llama 3.1 (θ 500000, head 128,
// factor 8, low 1, high 4, original 8192): the highest frequencies keep 1,
// the lowest get 8, and the parameters are recovered.
func TestLlama3Factors(t *testing.T) {
	f := llama3Factors(500000, 128, 8, 1, 4, 8192)
	if f[0] != 1 || f[63] != 8 {
		t.Errorf("factors %v … %v, want 1 … 8", f[0], f[63])
	}
	// i = 44: wavelength 2π·500000^(88/128) = 52026 > 8192: scaled by 8.
	// i = 34: wavelength 2π·500000^(68/128) = 6695.1 between 2048 and 8192:
	// smooth = (8192/6695.1 − 1)/3 = 0.074527, factor 1/((1−s)/8 + s) = 5.2573.
	if f[44] != 8 || math.Abs(float64(f[34])-5.2573) > 1e-3 {
		t.Errorf("f[44] = %v, f[34] = %v; want 8, 5.2573", f[44], f[34])
	}
	fa, lo, hi, orig, ok := llama3Params(f, 500000, 128)
	if !ok || fa != 8 || lo != 1 || hi != 4 || orig != 8192 {
		t.Errorf("recovered %v %v %v %v %v", fa, lo, hi, orig, ok)
	}
}

// TestGGUFQ8Minus128: ggml allows a Q8_0 quant of -128, the .mlb format does
// not; the import sets it to -127 and says which tensor lost precision.
func TestGGUFQ8Minus128(t *testing.T) {
	in := synthMLB(t, "llama", Options{})
	dir := filepath.Dir(in)
	g, bad := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "bad.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	rewriteGGUF(t, g, bad, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range ts {
			if ts[i].Name == "blk.1.attn_v.weight" {
				data[i][2+5] = 0x80 // block 0, quant 5
			}
		}
		return kvs, ts, data
	})
	var log bytes.Buffer
	out := filepath.Join(dir, "fixed.mlb")
	if _, err := ConvertGGUF(context.Background(), bad, Options{Out: out, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "lost precision: 1 tensors Q8_0 with quants of -128 (1, set to -127") || !strings.Contains(log.String(), "blk.1.attn_v.weight") {
		t.Errorf("log %q lacks the -128 line", log.String())
	}
	f, err := mlb.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if q := f.Tensor("blk.1.wv").Q8()[5]; q != -127 {
		t.Errorf("quant %d, want -127", q)
	}
}

// TestGGUFPhi3Fused builds the GGUF convert_hf_to_gguf writes for Phi-3 (NeoX
// RoPE, so q/k rows in rotate-half order; attn_qkv fused; ffn_up holding gate
// then up) from the llama-architecture export of a synthesised Phi-3, and
// checks that importing it gives the same .mlb.
func TestGGUFPhi3Fused(t *testing.T) {
	in := synthMLB(t, "phi3", Options{})
	dir := filepath.Dir(in)
	g, p3 := filepath.Join(dir, "llama.gguf"), filepath.Join(dir, "phi3.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := mlb.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	m.Close()
	hd := h.HeadDimEff()
	perm := ropePerm(hd, h.RotDimEff())
	rewriteGGUF(t, g, p3, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range kvs {
			if k, ok := strings.CutPrefix(kvs[i].Key, "llama."); ok {
				kvs[i].Key = "phi3." + k
			}
			if kvs[i].Key == "general.architecture" {
				kvs[i].Value = gguf.String("phi3")
			}
		}
		byName := map[string]int{}
		for i, ti := range ts {
			byName[ti.Name] = i
		}
		rowBytes := func(ti gguf.TensorInfo) int { return int(ti.Shape[0]) / 32 * ti.Type.BlockBytes() }
		// rotHalf puts interleaved rows back in rotate-half order: row
		// perm(r) of the GGUF came from row r of the interleaved matrix.
		rotHalf := func(i int) []byte {
			rb := rowBytes(ts[i])
			out := make([]byte, len(data[i]))
			for r := 0; r < len(data[i])/rb; r++ {
				copy(out[perm(r)*rb:], data[i][r*rb:(r+1)*rb])
			}
			return out
		}
		var nts []gguf.TensorInfo
		var nd [][]byte
		for i, ti := range ts {
			name := ti.Name
			switch {
			case strings.HasSuffix(name, ".attn_q.weight"):
				b := strings.TrimSuffix(name, "attn_q.weight")
				k, v := byName[b+"attn_k.weight"], byName[b+"attn_v.weight"]
				qkv := append(append(rotHalf(i), rotHalf(k)...), data[v]...)
				rows := ti.Shape[1] + ts[k].Shape[1] + ts[v].Shape[1]
				nts = append(nts, gguf.TensorInfo{Name: b + "attn_qkv.weight", Type: ti.Type, Shape: []uint64{ti.Shape[0], rows}})
				nd = append(nd, qkv)
			case strings.HasSuffix(name, ".ffn_gate.weight"):
				b := strings.TrimSuffix(name, "ffn_gate.weight")
				u := byName[b+"ffn_up.weight"]
				nts = append(nts, gguf.TensorInfo{Name: b + "ffn_up.weight", Type: ti.Type, Shape: []uint64{ti.Shape[0], 2 * ti.Shape[1]}})
				nd = append(nd, append(append([]byte(nil), data[i]...), data[u]...))
			case strings.HasSuffix(name, ".attn_k.weight"), strings.HasSuffix(name, ".attn_v.weight"), strings.HasSuffix(name, ".ffn_up.weight"):
			default:
				nts, nd = append(nts, ti), append(nd, data[i])
			}
		}
		return kvs, nts, nd
	})
	back := filepath.Join(dir, "back.mlb")
	rep, err := ConvertGGUF(context.Background(), p3, Options{Out: back})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Family != "phi3" {
		t.Errorf("family %s, want phi3", rep.Family)
	}
	if !bytes.Equal(readFile(t, in), readFile(t, back)) {
		t.Error("the Phi-3 layout imports to another .mlb")
	}
}

// TestGGUFTekkenPipeline: a pre-tokenizer no flag selects (Mistral NeMo's
// "tekken") becomes a pipeline section with its regex, and exports back as
// "tekken".
func TestGGUFTekkenPipeline(t *testing.T) {
	in := synthMLB(t, "llama", Options{})
	dir := filepath.Dir(in)
	g, tk := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "tekken.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	rewriteGGUF(t, g, tk, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range kvs {
			if kvs[i].Key == "tokenizer.ggml.pre" {
				kvs[i].Value = gguf.String("tekken")
			}
			if kvs[i].Key == "tokenizer.ggml.add_bos_token" {
				kvs = append(kvs[:i], kvs[i+1:]...) // llama.cpp's default for tekken: add BOS
				break
			}
		}
		return kvs, ts, data
	})
	a := filepath.Join(dir, "a.mlb")
	if _, err := ConvertGGUF(context.Background(), tk, Options{Out: a}); err != nil {
		t.Fatal(err)
	}
	tok, err := mlt.Open(TokenizerPath(a))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Pipeline == nil || tok.Flags&(mlt.FlagPipeline|mlt.FlagIgnoreMerges|mlt.FlagAddBOS) != mlt.FlagPipeline|mlt.FlagIgnoreMerges|mlt.FlagAddBOS ||
		tok.Pipeline.PreTokenizers[0] != mlt.SplitRegex(ggufPreRegex["tekken"].re) {
		t.Fatalf("flags %v, pipeline %+v", mlt.FlagNames(tok.Flags), tok.Pipeline)
	}
	// The pipeline compiles and encodes (its regex is mlt's to run exactly).
	ids := tok.Encode("HelloWorld", false)
	if got := tok.Decode(ids); got != "HelloWorld" {
		t.Errorf("decode(encode) = %q", got)
	}
	g2, b := filepath.Join(dir, "again.gguf"), filepath.Join(dir, "b.mlb")
	if _, err := ExportGGUF(a, g2, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(g2)
	if err != nil {
		t.Fatal(err)
	}
	pre, _ := f.String("tokenizer.ggml.pre")
	f.Close()
	if pre != "tekken" {
		t.Errorf("exported pre %q, want tekken", pre)
	}
	if _, err := ConvertGGUF(context.Background(), g2, Options{Out: b}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, TokenizerPath(a)), readFile(t, TokenizerPath(b))) {
		t.Error("the tekken tokenizer does not round-trip")
	}
}

// TestGGUFGraniteMultipliers: a Granite GGUF as llama.cpp stores it keeps
// the residual and logit multipliers as keys; the import folds them (wo and
// w2 times residual_scale, requantized and named; the final norm divided by
// logit_scale).
func TestGGUFGraniteMultipliers(t *testing.T) {
	in := synthMLB(t, "granite", Options{})
	dir := filepath.Dir(in)
	g, g2 := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "scaled.gguf")
	if _, err := ExportGGUF(in, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	rewriteGGUF(t, g, g2, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range kvs {
			switch kvs[i].Key {
			case "granite.residual_scale":
				kvs[i].Value = gguf.Float32(0.5)
			case "granite.logit_scale":
				kvs[i].Value = gguf.Float32(4)
			}
		}
		return kvs, ts, data
	})
	var log bytes.Buffer
	out := filepath.Join(dir, "scaled.mlb")
	if _, err := ConvertGGUF(context.Background(), g2, Options{Out: out, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "(scaled by a Granite multiplier)") {
		t.Errorf("log %q does not name the rescaled tensors", log.String())
	}
	a, err := mlb.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := mlb.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i, x := range a.Tensor("final_norm").F32 {
		if y := b.Tensor("final_norm").F32[i]; y != x*float32(1.0/4) {
			t.Fatalf("final_norm[%d] = %v, want %v / 4", i, y, x)
		}
	}
	wo := a.Tensor("blk.0.wo")
	w := quantize.Dequantize(quantize.TypeQ8_0, wo.Q, wo.D, wo.Rows, wo.Cols)
	for i := range w {
		w[i] *= 0.5
	}
	q, _, err := quantize.Matrix(quantize.TypeQ8_0, w, wo.Rows, wo.Cols, quantize.Options{F16Scales: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q, b.Tensor("blk.0.wo").Q) {
		t.Error("blk.0.wo is not the requantized wo × 0.5")
	}
}
