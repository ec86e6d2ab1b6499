package imatrix

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// TestAllocBound feeds Parse headers whose sizes claim the most (2^31,
// 2^32-1 and MaxDim for every size, token counts at 2^63) with few or no
// sums, and valid files, and checks that no call allocates more than a small
// multiple of its input.
func TestAllocBound(t *testing.T) {
	le := binary.LittleEndian
	hdr := func(nLayers, dim, hidden, qdim uint32, tokens uint64, sums int) []byte {
		b := []byte(Magic)
		for _, v := range []uint32{Version, nLayers, dim, hidden, qdim} {
			b = le.AppendUint32(b, v)
		}
		b = le.AppendUint64(le.AppendUint64(b, tokens), tokens)
		return append(b, make([]byte, 8*sums)...)
	}
	inputs := map[string][]byte{}
	for _, v := range []uint32{1 << 31, math.MaxUint32, MaxDim} {
		s := fmt.Sprint(v)
		inputs["n_layers "+s] = hdr(v, 32, 32, 0, 1, 4)
		inputs["dim "+s] = hdr(1, v, 32, 0, 1, 4)
		inputs["hidden_dim "+s] = hdr(1, 32, v, 0, 1, 4)
		inputs["q_dim "+s] = hdr(1, 32, 32, v, 1, 4)
		inputs["every size "+s] = hdr(v, v, v, v, math.MaxInt64, 1<<10)
	}
	inputs["tokens 2^63"] = hdr(1, 32, 32, 0, 1<<63, 0)
	inputs["header only"] = hdr(1, 32, 32, 0, 1, 0)
	g := New(2, 64, 128, 64)
	g.LayerTokens = 1 << 62
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	inputs["valid"] = b
	inputs["valid less one sum"] = b[:len(b)-8]
	inputs["hand-made"] = handFile(t)
	for name, b := range inputs {
		testenv.CheckAllocBound(t, name, len(b), testenv.AllocFactor, func() { Parse(b) })
	}
}
