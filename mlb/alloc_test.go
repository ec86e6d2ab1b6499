package mlb_test

import (
	"math"
	"os"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestAllocBound feeds Parse headers that claim the most (counts at 2^31 and
// 2^32-1, every size at its limit, layer flags for 2^16 layers in a file far
// too short for the arrays), and valid files of every feature, and checks
// that no call allocates more than a small multiple of its input.
func TestAllocBound(t *testing.T) {
	type input struct {
		name string
		b    []byte
	}
	var inputs []input
	header := func(name string, edit func(h *mlb.Header), tail int) {
		h := mlbtest.Base()
		edit(&h)
		inputs = append(inputs, input{name, append(h.Marshal(), make([]byte, tail)...)})
	}
	for _, v := range []uint32{1 << 31, math.MaxUint32} {
		header("n_layers", func(h *mlb.Header) { h.NLayers = v }, 0)
		header("vocab", func(h *mlb.Header) { h.Vocab = v }, 0)
		header("dim", func(h *mlb.Header) { h.Dim = v }, 0)
		header("hidden_dim", func(h *mlb.Header) { h.HiddenDim = v }, 0)
		header("max_seq", func(h *mlb.Header) { h.MaxSeq = v }, 0)
		header("n_heads", func(h *mlb.Header) { h.NHeads, h.NKVHeads = v, v }, 0)
		header("head_dim", func(h *mlb.Header) { h.HeadDim = v }, 0)
		header("lin_heads", func(h *mlb.Header) { h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = v, v, v, v, v }, 0)
	}
	largest := func(h *mlb.Header) {
		h.NLayers, h.Dim, h.HiddenDim, h.Vocab, h.MaxSeq = mlb.MaxDim, mlb.MaxDim, mlb.MaxDim, mlb.MaxVocab, mlb.MaxVocab
	}
	header("every size at its limit", largest, 0)
	header("every size at its limit, layer flags", func(h *mlb.Header) { largest(h); h.LayerFlags = 1 }, mlb.MaxDim)
	header("every size at its limit, 1 MiB body", largest, 1<<20)
	for _, c := range tinyCases() {
		b, err := os.ReadFile(mlbtest.Write(t, t.TempDir(), c.Header, 7))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{"valid " + c.Name, b}, input{"truncated " + c.Name, b[:len(b)-1]})
	}
	for _, in := range inputs {
		testenv.CheckAllocBound(t, in.name, len(in.b), testenv.AllocFactor, func() { mlb.Parse(in.b) })
	}
}
