package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
)

// storiesPadded is the FFN width of the padded stories260K (172 → 192, a
// multiple of 32, so that every matrix of it takes blocks of 32).
const storiesPadded = 192

// writePaddedStories writes testdata/stories260K as a checkpoint in dir
// whose FFN is 192 wide: gate and up get zero rows, down zero columns,
// config.json says intermediate_size 192, so every matrix is quantized as
// the type asks (no true_hidden_dim). The function is the model's: the
// zero channels add silu(0)·0 = 0.
func writePaddedStories(t *testing.T, dir string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "stories260K")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"tokenizer.json", "tokenizer_config.json", "generation_config.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), mustRead(t, filepath.Join(src, n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cfg map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(src, "config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	hidden := int(cfg["intermediate_size"].(float64))
	cfg["intermediate_size"] = storiesPadded
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sf, err := OpenSafetensors(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	type out struct {
		name  string
		shape []int
		data  []float32
	}
	var ts []out
	for _, tn := range sf.Tensors {
		x, err := tn.F32()
		if err != nil {
			t.Fatal(err)
		}
		shape := append([]int(nil), tn.Shape...)
		switch {
		case strings.HasSuffix(tn.Name, "mlp.gate_proj.weight"), strings.HasSuffix(tn.Name, "mlp.up_proj.weight"):
			x = append(x, make([]float32, (storiesPadded-hidden)*shape[1])...)
			shape[0] = storiesPadded
		case strings.HasSuffix(tn.Name, "mlp.down_proj.weight"):
			x = padCols(x, shape[0], hidden, storiesPadded)
			shape[1] = storiesPadded
		}
		ts = append(ts, out{tn.Name, shape, x})
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	hdr := map[string]any{}
	off := 0
	for _, tn := range ts {
		hdr[tn.name] = map[string]any{"dtype": "F32", "shape": tn.shape, "data_offsets": []int{off, off + 4*len(tn.data)}}
		off += 4 * len(tn.data)
	}
	hj, _ := json.Marshal(hdr)
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(hj)))
	buf.Write(hj)
	for _, tn := range ts {
		binary.Write(&buf, binary.LittleEndian, tn.data)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// padCols widens each of rows rows of x from cols to width with zeros.
func padCols(x []float32, rows, cols, width int) []float32 {
	y := make([]float32, rows*width)
	for r := range rows {
		copy(y[r*width:], x[r*cols:(r+1)*cols])
	}
	return y
}

// writePaddedStoriesGGUF writes testdata/stories260K.gguf (F32, the GGUF
// llama.cpp's own tests use) with its FFN padded as writePaddedStories
// pads the checkpoint: the F32 model llama-quantize and the KL base start
// from.
func writePaddedStoriesGGUF(t *testing.T, path string) {
	t.Helper()
	f, err := gguf.Open(filepath.Join("..", "testdata", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kvs []gguf.KV
	for _, kv := range f.KVs {
		if kv.Key == "llama.feed_forward_length" {
			kv.Value = gguf.Uint32(storiesPadded)
		}
		kvs = append(kvs, gguf.KV{Key: kv.Key, Value: kv.Value})
	}
	var infos []gguf.TensorInfo
	data := map[string][]byte{}
	for _, tn := range f.Tensors {
		if tn.Type != gguf.F32 {
			t.Fatalf("%s: %v, want F32", tn.Name, tn.Type)
		}
		shape := append([]uint64(nil), tn.Shape...)
		d := tn.Data
		switch {
		case strings.HasSuffix(tn.Name, "ffn_gate.weight"), strings.HasSuffix(tn.Name, "ffn_up.weight"):
			d = append(append([]byte(nil), d...), make([]byte, 4*int(shape[0])*(storiesPadded-int(shape[1])))...)
			shape[1] = storiesPadded
		case strings.HasSuffix(tn.Name, "ffn_down.weight"):
			cols, rows := int(shape[0]), int(shape[1])
			x := make([]float32, rows*cols)
			binary.Read(bytes.NewReader(d), binary.LittleEndian, x)
			var b bytes.Buffer
			binary.Write(&b, binary.LittleEndian, padCols(x, rows, cols, storiesPadded))
			d, shape[0] = b.Bytes(), storiesPadded
		}
		infos = append(infos, gguf.TensorInfo{Name: tn.Name, Type: tn.Type, Shape: shape})
		data[tn.Name] = d
	}
	w, err := gguf.Create(path, kvs, infos)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range infos {
		if err := w.WriteTensor(ti.Name, data[ti.Name]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// sampleStoryText samples stories from m (temperature 1, from BOS, each to
// EOS or 400 tokens), seed after seed from seed0, until they hold n
// tokens; it returns their text, one story a line, and the token stream
// with each story after its BOS.
func sampleStoryText(t *testing.T, m *infer.Model, tok *mlt.Tokenizer, seed0 uint64, n int) (string, []int) {
	t.Helper()
	s, err := m.NewSession(infer.SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bos, eos := int(tok.BOS), int(tok.EOS)
	var text strings.Builder
	var ids []int
	for seed := seed0; len(ids) < n; seed++ {
		s.Reset()
		r, err := infer.Generate(context.Background(), s, []int{bos}, infer.GenerateOptions{MaxTokens: 400, Stop: []int{eos},
			Sampler: infer.NewSampler(infer.SamplerOptions{Temp: 1, Seed: seed})}, nil)
		if err != nil {
			t.Fatal(err)
		}
		body := r.Tokens
		if len(body) > 0 && body[len(body)-1] == eos {
			body = body[:len(body)-1]
		}
		ids = append(append(ids, bos), body...)
		text.WriteString(strings.TrimSpace(tok.Decode(body)))
		text.WriteString("\n")
	}
	return text.String(), ids
}

// bitsPerWeight is 8 × the bytes of the file's matrices (tensors of two
// dimensions) over their elements.
func bitsPerWeight(t *testing.T, path string) float64 {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bytes, elems float64
	for _, tn := range f.Tensors {
		if len(tn.Shape) == 2 {
			bytes += float64(len(tn.Data))
			elems += float64(tn.Elems())
		}
	}
	return 8 * bytes / elems
}

var meanKLD = regexp.MustCompile(`Mean\s+KLD:\s+([0-9.]+)\s+±\s+([0-9.]+)`)

// TestStoriesKL (opt-in: KRAFLA_LLAMA_QUANTIZE, with llama-perplexity
// beside it; scripts/kl-stories.sh runs it) measures, with one tool for
// every file (llama.cpp's llama-perplexity --kl-divergence against the F32
// model, context 256), the KL divergence of stories260K (FFN padded to
// 192) quantized by krafla (convert, then export) and by llama-quantize
// (from the padded F32 GGUF), each type with and without one importance
// matrix, and logs the table with each file's bits per weight. The mixes
// are made alike: krafla's Q4_0 keeps the shared embedding in Q8_0 (--q8
// tok_emb) as llama-quantize's Q4_0 does (Q6_K, falling back to Q8_0 at
// width 64), and llama-quantize's IQ4_NL and IQ4_XS quantize the embedding
// as IQ4_NL, as krafla's do; the other types are each tool's own mix.
//
// Text: stories sampled from the Q8_0 model (temperature 1, from BOS),
// seeds 1, 2, … for the importance matrix (KRAFLA_KL_CAL tokens, default
// 4096; collected by krafla on the Q8_0 model and given to llama-quantize
// as its legacy imatrix file with the same values), seeds from 1000 for
// the evaluation (KRAFLA_KL_EVAL tokens, default 12288), so neither the
// quantizers nor the imatrix saw it. It fails where krafla's Q4_0 best fit
// is not below llama-quantize's Q4_0, with the importance matrix and
// without (issue 24's goal); the same goal for IQ4_NL is not met yet
// (docs/FORMATS.md) and is logged.
func TestStoriesKL(t *testing.T) {
	lq := llamaQuantize(t)
	lp := filepath.Join(filepath.Dir(lq), "llama-perplexity")
	if _, err := os.Stat(lp); err != nil {
		t.Skipf("no llama-perplexity beside %s: %v", lq, err)
	}
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
		return def
	}
	nCal, nEval := env("KRAFLA_KL_CAL", 4096), env("KRAFLA_KL_EVAL", 12288)
	dir := t.TempDir()
	if d := os.Getenv("KRAFLA_KL_DIR"); d != "" {
		dir = d // keep the files (the script's choice)
	}
	ck := filepath.Join(dir, "ck")
	writePaddedStories(t, ck)
	f32 := filepath.Join(dir, "f32.gguf")
	writePaddedStoriesGGUF(t, f32)

	// the Q8_0 model: the texts and the importance matrix
	q8 := filepath.Join(dir, "q8_0.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: q8, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	m8, err := infer.Open(q8)
	if err != nil {
		t.Fatal(err)
	}
	defer m8.Close()
	tok, err := mlt.Open(TokenizerPath(q8))
	if err != nil {
		t.Fatal(err)
	}
	evalText, _ := sampleStoryText(t, m8, tok, 1000, nEval)
	calText, calIDs := sampleStoryText(t, m8, tok, 1, nCal)
	evalPath, calPath := filepath.Join(dir, "eval.txt"), filepath.Join(dir, "calibration.txt")
	if err := os.WriteFile(evalPath, []byte(evalText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(calPath, []byte(calText), 0o644); err != nil {
		t.Fatal(err)
	}
	s8, err := m8.NewSession(infer.SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	im, err := infer.Imatrix(context.Background(), s8, calIDs, infer.ChunkOptions{Chunk: 256, BOS: -1}, nil)
	s8.Close()
	if err != nil {
		t.Fatal(err)
	}
	mli := filepath.Join(dir, "stories.imatrix")
	if err := im.Write(mli); err != nil {
		t.Fatal(err)
	}
	bg, err := gguf.Open(f32)
	if err != nil {
		t.Fatal(err)
	}
	imps := map[string][]float32{}
	for _, ti := range bg.Tensors {
		if imp := ggufImportance(im, ti.Name); imp != nil && len(imp) == int(ti.Shape[0]) {
			imps[ti.Name] = imp
		}
	}
	bg.Close()
	dat := filepath.Join(dir, "stories.imatrix.dat")
	writeLegacyImatrix(t, dat, imps)

	ldEnv := append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(lq))
	base := filepath.Join(dir, "f32.kld")
	cmd := exec.Command(lp, "-m", f32, "-f", evalPath, "-c", "256", "-b", "256", "-t", "1", "--kl-divergence-base", base)
	cmd.Env = ldEnv
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("llama-perplexity (base): %v\n%s", err, o)
	}
	kl := func(gg string) (float64, float64) {
		var o []byte
		var mm [][]byte
		// llama.cpp's asynchronous log sometimes loses the last lines at
		// exit on this loaded machine: the run is repeated then
		for try := 0; mm == nil && try < 3; try++ {
			cmd := exec.Command(lp, "-m", gg, "-t", "1", "-b", "256", "--kl-divergence-base", base, "--kl-divergence")
			cmd.Env = ldEnv
			var err error
			if o, err = cmd.CombinedOutput(); err != nil {
				t.Fatalf("llama-perplexity %s: %v\n%s", gg, err, o)
			}
			mm = meanKLD.FindSubmatch(o)
		}
		if mm == nil {
			t.Fatalf("llama-perplexity %s: no Mean KLD line in three runs\n%s", gg, o)
		}
		v, _ := strconv.ParseFloat(string(mm[1]), 64)
		u, _ := strconv.ParseFloat(string(mm[2]), 64)
		return v, u
	}

	type cell struct {
		bpw, kl, unc float64
		ok           bool
	}
	type row struct {
		name                   string
		ours, oursIm, lq, lqIm cell
	}
	ours := func(name string, opt Options, withIm bool) cell {
		if withIm {
			opt.Imatrix, name = mli, name+"-imatrix"
		}
		opt.Out, opt.F16Scales = filepath.Join(dir, "krafla-"+name+".mlb"), true
		if _, err := Convert(context.Background(), ck, opt); err != nil {
			t.Fatalf("krafla %s: %v", name, err)
		}
		gg := strings.TrimSuffix(opt.Out, ".mlb") + ".gguf"
		if _, err := ExportGGUF(opt.Out, gg, ExportOptions{}); err != nil {
			t.Fatalf("export %s: %v", name, err)
		}
		v, u := kl(gg)
		return cell{bitsPerWeight(t, gg), v, u, true}
	}
	theirs := func(typ string, withIm bool) cell {
		gg := filepath.Join(dir, "llama-"+typ+".gguf")
		var args []string
		if withIm {
			gg = filepath.Join(dir, "llama-"+typ+"-imatrix.gguf")
			args = []string{"--imatrix", dat}
		}
		args = append(args, f32, gg, typ)
		cmd := exec.Command(lq, args...)
		cmd.Env = ldEnv
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("llama-quantize %s: %v\n%s", typ, err, o)
		} else if want := fmt.Sprintf("loaded %d importance matrix entries", len(imps)); withIm && !bytes.Contains(o, []byte(want)) {
			t.Fatalf("llama-quantize %s did not say %q\n%s", typ, want, o)
		}
		v, u := kl(gg)
		return cell{bitsPerWeight(t, gg), v, u, true}
	}
	// llama-quantize's Q4_0 keeps the shared embedding in Q6_K (here its
	// Q8_0 fallback): --q8 tok_emb is the same mix
	q4, q8e := quantize.TypeQ4_0, uint32(mlb.MaskTokEmb)
	rows := []row{
		{name: "q4_0 round", ours: ours("q4_0-round", Options{Type: q4, Q4Rule: "round", Q8Mask: q8e}, false), lq: theirs("Q4_0", false)},
		{name: "q4_0 best fit", ours: ours("q4_0-best", Options{Type: q4, Q4Rule: "best", Q8Mask: q8e}, false),
			oursIm: ours("q4_0-best", Options{Type: q4, Q4Rule: "best", Q8Mask: q8e}, true), lqIm: theirs("Q4_0", true)},
	}
	for _, c := range []struct {
		name, lq string
		gt       quantize.GGMLType
		mix      bool
	}{
		{"q4_k_m", "Q4_K_M", quantize.GGMLQ4_K, true}, {"q5_k_m", "Q5_K_M", quantize.GGMLQ5_K, true},
		{"q6_k", "Q6_K", quantize.GGMLQ6_K, false}, {"iq4_nl", "IQ4_NL", quantize.GGMLIQ4_NL, false},
		{"iq4_xs", "IQ4_XS", quantize.GGMLIQ4_XS, false},
	} {
		opt := Options{GGML: c.gt, Mix: c.mix}
		rows = append(rows, row{name: c.name, ours: ours(c.name, opt, false), oursIm: ours(c.name, opt, true),
			lq: theirs(c.lq, false), lqIm: theirs(c.lq, true)})
	}
	rows = append(rows, row{name: "q8_0", ours: ours("q8_0", Options{}, false), lq: theirs("Q8_0", false)})

	var b strings.Builder
	fmt.Fprintf(&b, "evaluation: %d tokens (%d words), calibration: %d tokens; llama-perplexity -c 256\n\n", nEval, len(strings.Fields(evalText)), nCal)
	fmt.Fprintf(&b, "| type | krafla bpw | krafla KL | krafla KL, imatrix | llama-quantize bpw | llama-quantize KL | llama-quantize KL, imatrix |\n|---|---|---|---|---|---|---|\n")
	c := func(x cell) string {
		if !x.ok {
			return "—"
		}
		return fmt.Sprintf("%.4f ± %.4f", x.kl, x.unc)
	}
	bp := func(x, y cell) string {
		if !x.ok {
			x = y
		}
		return fmt.Sprintf("%.2f", x.bpw)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.name, bp(r.ours, r.oursIm), c(r.ours), c(r.oursIm), bp(r.lq, r.lqIm), c(r.lq), c(r.lqIm))
	}
	t.Logf("stories260K, FFN padded to %d, KL divergence against the F32 model:\n%s", storiesPadded, b.String())

	// the goals (issue 24: with the same importance matrix): IQ4_NL and
	// Q4_0 best fit below llama-quantize's IQ4_NL and Q4_0; IQ4_NL without
	// one is logged
	byName := map[string]row{}
	for _, r := range rows {
		byName[r.name] = r
	}
	nl, q4b, q4r := byName["iq4_nl"], byName["q4_0 best fit"], byName["q4_0 round"]
	for _, g := range []struct {
		what      string
		ours, ref cell
		open      bool // a goal not met yet: logged, not failed
	}{
		{"IQ4_NL without imatrix", nl.ours, nl.lq, true}, {"IQ4_NL with imatrix", nl.oursIm, nl.lqIm, false},
		{"Q4_0 best fit vs llama-quantize Q4_0 without imatrix", q4b.ours, q4r.lq, false},
		{"Q4_0 best fit vs llama-quantize Q4_0 with imatrix", q4b.oursIm, q4b.lqIm, false},
	} {
		switch {
		case g.ours.kl < g.ref.kl:
		case g.open:
			t.Logf("goal not met yet (issue 24): %s: krafla's KL %.4f, llama-quantize's %.4f", g.what, g.ours.kl, g.ref.kl)
		default:
			t.Errorf("%s: krafla's KL %.4f, llama-quantize's %.4f: want below", g.what, g.ours.kl, g.ref.kl)
		}
	}
}
