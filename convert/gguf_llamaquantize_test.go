package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/quantize"
)

// llamaQuantizeEnv names llama.cpp's llama-quantize for the tests that make
// their GGUF files with it (built as ../shared/PERF.md describes; not
// needed otherwise: those tests skip without it).
const llamaQuantizeEnv = "KRAFLA_LLAMA_QUANTIZE"

// llamaQuantize returns the llama-quantize binary $KRAFLA_LLAMA_QUANTIZE
// names, skipping the test when it is unset or not there.
func llamaQuantize(t *testing.T) string {
	t.Helper()
	lq := os.Getenv(llamaQuantizeEnv)
	if lq == "" {
		t.Skip("set " + llamaQuantizeEnv + " to llama.cpp's llama-quantize to test files it makes")
	}
	if fi, err := os.Stat(lq); err != nil || fi.IsDir() {
		t.Skipf("%s=%s: not a file (%v)", llamaQuantizeEnv, lq, err)
	}
	return lq
}

// llamaQuantizeTypes are llama-quantize's type names and a ggml type each
// output must hold (so that a fallback does not pass for the type).
var llamaQuantizeTypes = []struct {
	name string
	must gguf.Type
}{
	{"Q4_K_M", gguf.Q4_K}, {"Q4_K_S", gguf.Q4_K}, {"Q5_K_M", gguf.Q5_K}, {"Q5_K_S", gguf.Q5_K},
	{"Q6_K", gguf.Q6_K}, {"IQ4_NL", gguf.IQ4_NL}, {"IQ4_XS", gguf.IQ4_XS}, {"Q5_0", gguf.Q5_0},
	{"Q4_1", gguf.Q4_1},
}

// TestLlamaQuantizeKeep (opt-in: KRAFLA_LLAMA_QUANTIZE, and KRAFLA_LLAMACPP
// for the comparison with llama.cpp) quantizes a synthetic llama (the k256
// shape: every matrix whole superblocks wide) with llama.cpp's own
// llama-quantize to each type, imports the file with --type keep, checks
// that the export gives back every tensor byte for byte, and that krafla's
// greedy tokens and top log-probabilities agree with llama.cpp's on it.
func TestLlamaQuantizeKeep(t *testing.T) {
	lq := llamaQuantize(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 7, Shape: "k256"}); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(dir, "q8.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: q8, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "q8.gguf")
	if _, err := ExportGGUF(q8, base, ExportOptions{}); err != nil {
		t.Fatal(err)
	}

	nlc := os.Getenv("KRAFLA_LLAMACPP")
	node, nodeErr := exec.LookPath("node")
	var link string
	if nlc != "" && nodeErr == nil {
		script, err := filepath.Abs(filepath.Join("..", "scripts", "llamacpp", "greedy.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		link = filepath.Join(nlc, "krafla-greedy.mjs")
		if err := os.WriteFile(link, mustRead(t, script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range llamaQuantizeTypes {
		t.Run(c.name, func(t *testing.T) {
			gg := filepath.Join(dir, c.name+".gguf")
			cmd := exec.Command(lq, "--allow-requantize", base, gg, c.name)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(lq))
			if o, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("llama-quantize %s: %v\n%s", c.name, err, o)
			}
			src, err := gguf.Open(gg)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			types := map[gguf.Type]int{}
			for _, ti := range src.Tensors {
				types[ti.Type]++
			}
			if types[c.must] == 0 {
				t.Fatalf("llama-quantize %s wrote no %v tensor (types %v): the test would not test it", c.name, c.must, types)
			}
			t.Logf("%s: tensor types %v", c.name, types)

			out := filepath.Join(dir, c.name+".mlb")
			if _, err := ConvertGGUF(context.Background(), gg, Options{Out: out, Type: quantize.TypeKeep}); err != nil {
				t.Fatal(err)
			}
			back := filepath.Join(dir, c.name+".back.gguf")
			if _, err := ExportGGUF(out, back, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			bg, err := gguf.Open(back)
			if err != nil {
				t.Fatal(err)
			}
			defer bg.Close()
			got := map[string]gguf.Tensor{}
			for _, bt := range bg.Tensors {
				got[bt.Name] = bt
			}
			for _, st := range src.Tensors {
				bt, ok := got[st.Name]
				if !ok || bt.Type != st.Type || !bytes.Equal(bt.Data, st.Data) {
					t.Errorf("tensor %s: exported %v (%d bytes, found %v), llama-quantize wrote %v (%d bytes)",
						st.Name, bt.Type, len(bt.Data), ok, st.Type, len(st.Data))
				}
			}

			if link == "" {
				t.Skip("set KRAFLA_LLAMACPP (and have node) to compare with llama.cpp")
			}
			texts := filepath.Join(dir, "texts.json")
			if err := os.WriteFile(texts, []byte("[]"), 0o644); err != nil {
				t.Fatal(err)
			}
			const n = 24
			start := []int{1}
			r := runLlamaCpp(t, node, nlc, link, gg, n, joinInts(start), texts)
			r.Start = start
			k := kraflaRun(t, out, start, r.Tokens)
			agree, ties, diff := compareRunsTies(r, k)
			t.Logf("%s: %d of %d greedy tokens agree, %d more are near ties (krafla's top within %g of llama.cpp's token); max |Δ log p| of the top 8 = %.4g",
				c.name, agree, n, ties, nearTie, diff)
			if agree+ties != n || diff > llamaCppLogprobBound {
				t.Errorf("%d of %d greedy tokens agree (%d near ties), max |Δ log p| %.4g (bound %g)", agree, n, ties, diff, llamaCppLogprobBound)
			}
		})
	}
}

// nearTie is how far below krafla's most likely token llama.cpp's greedy
// token may be, in log-probability, for the step to count as a near tie:
// the two runs differ by design (see llamaCppLogprobBound), so two tokens
// within that of each other may swap.
const nearTie = 0.05

// compareRunsTies is compareRuns over every step (krafla follows
// llama.cpp's tokens, so the steps after a difference still compare): the
// steps whose greedy tokens agree, those where they differ by a near tie,
// and the largest log-probability difference of llama.cpp's top 8.
func compareRunsTies(r *llamaRun, k [][]float64) (agree, ties int, maxDiff float64) {
	for s, tok := range r.Tokens {
		for _, e := range r.top(s, 8) {
			maxDiff = math.Max(maxDiff, math.Abs(k[s][int(e[0])]-e[1]))
		}
		best := 0
		for j, x := range k[s] {
			if x > k[s][best] {
				best = j
			}
		}
		switch {
		case best == tok:
			agree++
		case k[s][best]-k[s][tok] < nearTie:
			ties++
		}
	}
	return agree, ties, maxDiff
}

// TestLlamaQuantizeRMSE (opt-in: KRAFLA_LLAMA_QUANTIZE) measures, per matrix
// of the synthetic llama (k256 and smollm2-135m shapes), the relative RMSE
// of llama-quantize's blocks and of quantize.QuantizeGGML's from the same
// input (the Q8_0 file llama-quantize requantizes, dequantized), no
// importance matrix, and prints the table worst (ours ÷ llama.cpp's) first.
// It fails if any of ours is more than 5% above llama.cpp's.
func TestLlamaQuantizeRMSE(t *testing.T) {
	lq := llamaQuantize(t)
	for _, shape := range []string{"k256", "smollm2-135m"} {
		if shape != "k256" && testing.Short() {
			continue
		}
		llamaQuantizeRMSE(t, lq, shape, false, 1.05)
	}
}

// TestLlamaQuantizeRMSEImatrix (opt-in: KRAFLA_LLAMA_QUANTIZE) is
// TestLlamaQuantizeRMSE with one importance matrix given to both
// quantizers: synthetic (log-normal over channels, seeded, as
// synthImatrix makes it), written as MLI1 for krafla and as llama.cpp's
// legacy imatrix file for llama-quantize --imatrix with the very values
// krafla's reader derives (normalized and floored), so that both weight
// every column alike. The error is imatrix-weighted:
// sqrt(Σ imp_c·(x − y)² / Σ imp_c·x²) per matrix. Shapes: k256, and
// smollm2-135m unless -short; KRAFLA_RMSE_SHAPES (comma-separated, e.g.
// smollm2-135m,llama-3.2-1b) replaces the list, and KRAFLA_RMSE_TYPES
// (e.g. Q4_K_M,IQ4_XS) the llama-quantize types. It fails if any matrix of
// ours is above llama.cpp's.
func TestLlamaQuantizeRMSEImatrix(t *testing.T) {
	lq := llamaQuantize(t)
	shapes := []string{"k256", "smollm2-135m"}
	if testing.Short() {
		shapes = shapes[:1]
	}
	if s := os.Getenv("KRAFLA_RMSE_SHAPES"); s != "" {
		shapes = strings.Split(s, ",")
	}
	for _, shape := range shapes {
		llamaQuantizeRMSE(t, lq, shape, true, 1)
	}
}

// synthImatrix is an importance matrix for the header's sizes: each
// channel's mean square exp(1.5·N(0,1)), from a PCG seeded with seed, one
// token (so sums are the means), the classifier slot included.
func synthImatrix(nLayers, dim, hidden, qDim int, seed uint64) *imatrix.File {
	f := imatrix.New(nLayers, dim, hidden, qDim)
	rng := rand.New(rand.NewPCG(seed, 24))
	for i := range f.Sums {
		f.Sums[i] = math.Exp(1.5 * rng.NormFloat64())
	}
	f.LayerTokens, f.ClassifierTokens = 1, 1
	return f
}

// ggufImportance is the importance krafla's converter gives the GGUF tensor
// name (blk.N.attn_q.weight …, output.weight), nil for the embedding and
// what the file has no slot for.
func ggufImportance(f *imatrix.File, name string) []float32 {
	if name == "output.weight" {
		return f.ClassifierImportance()
	}
	var l int
	var m string
	if n, _ := fmt.Sscanf(strings.ReplaceAll(name, ".", " "), "blk %d %s", &l, &m); n != 2 {
		return nil
	}
	s, ok := map[string]imatrix.Slot{"attn_q": imatrix.AttnIn, "attn_k": imatrix.AttnIn, "attn_v": imatrix.AttnIn,
		"attn_output": imatrix.AttnOut, "ffn_gate": imatrix.FFNIn, "ffn_up": imatrix.FFNIn, "ffn_down": imatrix.FFNOut}[m]
	if !ok {
		return nil
	}
	return f.Importance(l, s)
}

// writeLegacyImatrix writes imp (tensor name → per-column importance) as
// llama.cpp's legacy imatrix file (common/imatrix-loader.cpp,
// common_imatrix_load_legacy: i32 count; per entry i32 name length, name,
// i32 ncall, i32 nval, f32 values; then i32 chunks, i32 dataset length,
// dataset). llama-quantize divides the values by ncall, which is 1 here,
// so it weights by imp itself.
func writeLegacyImatrix(t *testing.T, path string, imp map[string][]float32) {
	t.Helper()
	names := make([]string, 0, len(imp))
	for n := range imp {
		names = append(names, n)
	}
	sort.Strings(names)
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(names)))
	for _, n := range names {
		b = le.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
		b = le.AppendUint32(b, 1)
		b = le.AppendUint32(b, uint32(len(imp[n])))
		for _, v := range imp[n] {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
	}
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, uint32(len("synthetic")))
	b = append(b, "synthetic"...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// llamaQuantizeRMSE writes the shape's synthetic llama, converts it to
// Q8_0, exports that as the GGUF llama-quantize requantizes to Q4_K_M,
// Q5_K_M, Q6_K, IQ4_NL and IQ4_XS (one run each), and compares each of
// llama-quantize's matrices with quantize.QuantizeGGML's from the same
// input (the Q8_0 values), each (matrix, ggml type) once. With withImatrix
// both get synthImatrix's importance and the error is weighted by it. It
// fails where ours exceeds bound × llama.cpp's, and logs the table, worst
// ratio first.
func llamaQuantizeRMSE(t *testing.T, lq, shape string, withImatrix bool, bound float64) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 9, Shape: shape}); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(dir, "q8.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: q8, F16Scales: true, Threads: 2, NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(ck)
	base := filepath.Join(dir, "q8.gguf")
	if _, err := ExportGGUF(q8, base, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(q8)
	bg, err := gguf.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	// src dequantizes a Q8_0 tensor of the base file (on demand, so that the
	// 1B shape's values are not all held at once).
	src := func(name string) []float32 {
		ti := bg.Tensor(name)
		if ti == nil || ti.Type != gguf.Q8_0 {
			return nil
		}
		x := make([]float32, len(ti.Data)/34*32)
		for b := range len(ti.Data) / 34 {
			blk := ti.Data[34*b : 34*b+34]
			d := quantize.DecodeScales(blk[:2], true)[0]
			for j := range 32 {
				x[32*b+j] = float32(int8(blk[2+j])) * d
			}
		}
		return x
	}
	var lqArgs []string
	imps := map[string][]float32{}
	if withImatrix {
		nl, _ := bg.Uint("llama.block_count")
		dim, _ := bg.Uint("llama.embedding_length")
		hid, _ := bg.Uint("llama.feed_forward_length")
		heads, _ := bg.Uint("llama.attention.head_count")
		q := int(dim)
		if kl, ok := bg.Uint("llama.attention.key_length"); ok {
			q = int(kl * heads)
		}
		f := synthImatrix(int(nl), int(dim), int(hid), q, 24)
		// through the MLI1 file, as convert --imatrix reads it
		mli := filepath.Join(dir, "synth.imatrix")
		if err := f.Write(mli); err != nil {
			t.Fatal(err)
		}
		if f, err = imatrix.Open(mli); err != nil {
			t.Fatal(err)
		}
		for _, ti := range bg.Tensors {
			if imp := ggufImportance(f, ti.Name); imp != nil && len(imp) == int(ti.Shape[0]) {
				imps[ti.Name] = imp
			}
		}
		dat := filepath.Join(dir, "synth.imatrix.dat")
		writeLegacyImatrix(t, dat, imps)
		lqArgs = []string{"--imatrix", dat}
	}
	type row struct {
		name, typ    string
		ours, theirs float64
	}
	var rows []row
	seen := map[string]bool{}
	types := []string{"Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL", "IQ4_XS"}
	if s := os.Getenv("KRAFLA_RMSE_TYPES"); s != "" {
		types = strings.Split(s, ",") // a subset, for the big shapes
	}
	for _, typ := range types {
		gg := filepath.Join(dir, typ+".gguf")
		cmd := exec.Command(lq, append(append([]string{"--allow-requantize"}, lqArgs...), base, gg, typ)...)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(lq))
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("llama-quantize %s: %v\n%s", typ, err, o)
		} else if want := fmt.Sprintf("loaded %d importance matrix entries", len(imps)); withImatrix && !bytes.Contains(o, []byte(want)) {
			t.Fatalf("llama-quantize %s did not say %q: the comparison would not be with its imatrix\n%s", typ, want, o)
		}
		f, err := gguf.Open(gg)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range f.Tensors {
			gt, ok := map[gguf.Type]quantize.GGMLType{gguf.Q4_K: quantize.GGMLQ4_K, gguf.Q5_K: quantize.GGMLQ5_K,
				gguf.Q6_K: quantize.GGMLQ6_K, gguf.IQ4_NL: quantize.GGMLIQ4_NL, gguf.IQ4_XS: quantize.GGMLIQ4_XS, gguf.Q5_0: quantize.GGMLQ5_0}[ti.Type]
			if !ok || seen[ti.Name+" "+gt.String()] {
				continue
			}
			x := src(ti.Name)
			if x == nil {
				continue
			}
			seen[ti.Name+" "+gt.String()] = true
			cols := int(ti.Shape[0])
			imp := imps[ti.Name]
			theirs := make([]float32, len(x))
			if err := quantize.DequantizeGGML(gt, ti.Data, theirs); err != nil {
				t.Fatal(err)
			}
			qb, err := quantize.QuantizeGGML(gt, x, len(x)/cols, cols, quantize.Options{Threads: 2, Importance: imp})
			if err != nil {
				t.Fatal(err)
			}
			ours := make([]float32, len(x))
			if err := quantize.DequantizeGGML(gt, qb, ours); err != nil {
				t.Fatal(err)
			}
			var sx, so, st float64
			for i, v := range x {
				w := 1.0
				if imp != nil {
					w = float64(imp[i%cols])
				}
				sx += w * float64(v) * float64(v)
				so += w * float64(ours[i]-v) * float64(ours[i]-v)
				st += w * float64(theirs[i]-v) * float64(theirs[i]-v)
			}
			r := row{shape + " " + ti.Name, typ + ":" + gt.String(), math.Sqrt(so / sx), math.Sqrt(st / sx)}
			rows = append(rows, r)
			// as it goes (go test -v streams it), so that a run of the big
			// shapes cut short still leaves what it measured
			t.Logf("row | %s | %s | %.5f | %.5f | %.4f |", r.name, r.typ, r.ours, r.theirs, r.ours/r.theirs)
		}
		f.Close()
		os.Remove(gg)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].ours/rows[i].theirs > rows[j].ours/rows[j].theirs })
	var b strings.Builder
	what := "rel. RMSE"
	if withImatrix {
		what = "imatrix-weighted rel. RMSE"
	}
	fmt.Fprintf(&b, "| matrix | file:type | krafla %s | llama-quantize | ratio |\n|---|---|---|---|---|\n", what)
	worse := 0
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.5f | %.5f | %.4f |\n", r.name, r.typ, r.ours, r.theirs, r.ours/r.theirs)
		if r.ours > bound*r.theirs {
			worse++
			t.Errorf("%s %s: %s %.5f, llama-quantize's %.5f", r.name, r.typ, what, r.ours, r.theirs)
		}
	}
	t.Logf("%s (%d matrices, %d above %g× llama-quantize's):\n%s", shape, len(rows), worse, bound, b.String())
}
