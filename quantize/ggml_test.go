package quantize

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/x448/float16"
)

// The oracle below is a port of llama.cpp's gguf-py reference,
// gguf-py/gguf/quants.py (node-llama-cpp 3.21.1's bundled llama.cpp), written
// from its numpy code and not from DequantizeGGML: each function follows the
// numpy program's reshapes and broadcasts index by index (hsplit, reshape,
// >> of a broadcast shift array, & mask, take_along_axis), and every numpy
// float32 array operation is one rounded float32 operation here. numpy does
// not fuse a*b-c, so neither does the port (explicit float32 conversions).

// pyF16 is `x.view(np.float16).astype(np.float32)` of two bytes.
func pyF16(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// pyQ4_1 ports Q4_1.dequantize_blocks for one block.
func pyQ4_1(blk []byte) []float32 {
	d, m, qs := pyF16(blk[0:2]), pyF16(blk[2:4]), blk[4:]
	// qs.reshape((n, -1, 1, 16)) >> [0, 4].reshape((1, 1, 2, 1)), & 0x0F, reshape (n, -1)
	out := make([]float32, 32)
	for sh := 0; sh < 2; sh++ {
		for k := 0; k < 16; k++ {
			q := float32((qs[k] >> (4 * sh)) & 0x0F)
			out[sh*16+k] = float32(d*q) + m
		}
	}
	return out
}

// pyQ5_0 ports Q5_0.dequantize_blocks.
func pyQ5_0(blk []byte) []float32 {
	d := pyF16(blk[0:2])
	qh := binary.LittleEndian.Uint32(blk[2:6]) // qh.view(np.uint32)
	qs := blk[6:]
	out := make([]float32, 32)
	for i := 0; i < 32; i++ {
		h := uint8((qh >> uint(i)) & 1)            // qh >> arange(32), & 1
		l := (qs[i%16] >> (4 * uint(i/16))) & 0x0F // ql reshape (n,-1,1,16) >> [0,4]
		q := int8(l|h<<4) - 16                     // .astype(np.int8) - np.int8(16)
		out[i] = d * float32(q)
	}
	return out
}

// pyIQ4_NL ports IQ4_NL.dequantize_blocks.
func pyIQ4_NL(blk []byte) []float32 {
	kv := []int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	d, qs := pyF16(blk[0:2]), blk[2:]
	out := make([]float32, 32)
	for sh := 0; sh < 2; sh++ {
		for k := 0; k < 16; k++ {
			out[16*sh+k] = d * float32(kv[(qs[k]>>(4*sh))&0x0F])
		}
	}
	return out
}

// pyScaleMin ports Q4_K.get_scale_min: scales reshaped (3, 4) into d, m, m_d;
// sc = concat(d & 0x3F, (m_d & 0x0F) | ((d >> 2) & 0x30)), min likewise.
func pyScaleMin(scales []byte) (sc, mn [8]uint8) {
	d, m, md := scales[0:4], scales[4:8], scales[8:12]
	for k := 0; k < 4; k++ {
		sc[k] = d[k] & 0x3F
		sc[4+k] = (md[k] & 0x0F) | ((d[k] >> 2) & 0x30)
		mn[k] = m[k] & 0x3F
		mn[4+k] = (md[k] >> 4) | ((m[k] >> 2) & 0x30)
	}
	return
}

// pyQ4_K ports Q4_K.dequantize_blocks (five = true: Q5_K's).
func pyQK(blk []byte, five bool) []float32 {
	d, dmin := pyF16(blk[0:2]), pyF16(blk[2:4])
	sc, mn := pyScaleMin(blk[4:16])
	qs, qh := blk[16:], []byte(nil)
	if five {
		qh, qs = blk[16:48], blk[48:]
	}
	out := make([]float32, 256)
	// qs.reshape((n, -1, 1, 32)) >> [0, 4].reshape((1, 1, 2, 1)): (n, 4, 2, 32) -> (n, 8, 32)
	for g := 0; g < 4; g++ {
		for sh := 0; sh < 2; sh++ {
			j := 2*g + sh
			dj := d * float32(sc[j])    // d * sc.astype(np.float32)
			mj := dmin * float32(mn[j]) // dmin * m.astype(np.float32)
			for k := 0; k < 32; k++ {
				q := (qs[32*g+k] >> (4 * uint(sh))) & 0x0F
				if five {
					// qh.reshape((n, -1, 1, 32)) >> arange(8).reshape((1, 1, 8, 1)): (n, 1, 8, 32)
					q |= ((qh[k] >> uint(j)) & 0x01) << 4
				}
				out[32*j+k] = float32(dj*float32(q)) - mj
			}
		}
	}
	return out
}

// pyQ6_K ports Q6_K.dequantize_blocks.
func pyQ6_K(blk []byte) []float32 {
	ql, qh, scales, d := blk[0:128], blk[128:192], blk[192:208], pyF16(blk[208:210])
	// ql.reshape((n, -1, 1, 64)) >> [0, 4]: (n, 2, 2, 64) -> & 0x0F -> (n, 8, 32)
	lo := make([]uint8, 256)
	for a := 0; a < 2; a++ {
		for sh := 0; sh < 2; sh++ {
			for k := 0; k < 64; k++ {
				lo[128*a+64*sh+k] = (ql[64*a+k] >> (4 * uint(sh))) & 0x0F
			}
		}
	}
	// qh.reshape((n, -1, 1, 32)) >> [0, 2, 4, 6]: (n, 2, 4, 32) -> & 0x03 -> (n, 8, 32)
	hi := make([]uint8, 256)
	for a := 0; a < 2; a++ {
		for sh := 0; sh < 4; sh++ {
			for k := 0; k < 32; k++ {
				hi[128*a+32*sh+k] = (qh[32*a+k] >> (2 * uint(sh))) & 0x03
			}
		}
	}
	out := make([]float32, 256)
	for i := 0; i < 256; i++ {
		q := int8(lo[i]|hi[i]<<4) - 32
		ds := d * float32(int8(scales[i/16])) // d * scales, reshaped (n, 16, 1)
		out[i] = ds * float32(q)
	}
	return out
}

// pyIQ4_XS ports IQ4_XS.dequantize_blocks.
func pyIQ4_XS(blk []byte) []float32 {
	kv := []int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	d := pyF16(blk[0:2])
	sh := binary.LittleEndian.Uint16(blk[2:4])
	sl, qs := blk[4:8], blk[8:]
	out := make([]float32, 256)
	for j := 0; j < 8; j++ {
		// scales_l.reshape((n, -1, 1)) >> [0, 4].reshape((1, 1, 2)) -> (n, 8)
		l := (sl[j/2] >> (4 * uint(j%2))) & 0x0F
		// scales_h.reshape((n, 1, -1)) >> [2*i for i in range(8)] -> (n, 8), .astype(uint8) & 3
		h := uint8(sh>>(2*uint(j))) & 0x03
		s := int8(l|h<<4) - 32
		dl := d * float32(s)
		// qs.reshape((n, -1, 1, 16)) >> [0, 4]: (n, 8, 2, 16) -> (n, 8, 32)
		for k := 0; k < 32; k++ {
			q := (qs[16*j+k%16] >> (4 * uint(k/16))) & 0x0F
			out[32*j+k] = dl * float32(kv[q])
		}
	}
	return out
}

var pyOracle = map[GGMLType]func([]byte) []float32{
	GGMLQ4_1: pyQ4_1, GGMLQ5_0: pyQ5_0, GGMLIQ4_NL: pyIQ4_NL,
	GGMLQ4_K: func(b []byte) []float32 { return pyQK(b, false) },
	GGMLQ5_K: func(b []byte) []float32 { return pyQK(b, true) },
	GGMLQ6_K: pyQ6_K, GGMLIQ4_XS: pyIQ4_XS,
}

// ggmlF16Fields are the byte offsets of each type's binary16 fields.
var ggmlF16Fields = map[GGMLType][]int{
	GGMLQ4_1: {0, 2}, GGMLQ5_0: {0}, GGMLQ4_K: {0, 2}, GGMLQ5_K: {0, 2},
	GGMLQ6_K: {208}, GGMLIQ4_NL: {0}, GGMLIQ4_XS: {0},
}

// randomGGML returns n blocks of t. With wild, every byte is random (binary16
// NaN, infinities and subnormals included); otherwise the binary16 fields are
// random normal-range values of either sign.
func randomGGML(r *rand.Rand, t GGMLType, n int, wild bool) []byte {
	b := make([]byte, n*t.BlockBytes())
	r.Read(b)
	if !wild {
		for i := 0; i < n; i++ {
			for _, o := range ggmlF16Fields[t] {
				v := float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(20)-14)))
				binary.LittleEndian.PutUint16(b[i*t.BlockBytes()+o:], float16.Fromfloat32(v).Bits())
			}
		}
	}
	return b
}

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestDequantizeGGMLMatchesGGUFPy checks DequantizeGGML bit for bit against
// the port of gguf-py's quants.py on random blocks of every type, tame and
// wild (NaN and infinite binary16 scales included).
func TestDequantizeGGMLMatchesGGUFPy(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	for typ, oracle := range pyOracle {
		for _, wild := range []bool{false, true} {
			const n = 400
			src := randomGGML(r, typ, n, wild)
			got := make([]float32, n*typ.BlockElems())
			if err := DequantizeGGML(typ, src, got); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := 0; i < n; i++ {
				want := oracle(src[i*typ.BlockBytes() : (i+1)*typ.BlockBytes()])
				for j, w := range want {
					if g := got[i*typ.BlockElems()+j]; !sameF32(g, w) && bad < 5 {
						bad++
						t.Errorf("%v wild=%v block %d weight %d: got %v (%#x), gguf-py %v (%#x)", typ, wild, i, j, g, math.Float32bits(g), w, math.Float32bits(w))
					}
				}
			}
		}
	}
}

// TestDequantizeGGMLKnown checks hand-computed blocks, values written from
// docs/FORMATS.md's table by hand.
func TestDequantizeGGMLKnown(t *testing.T) {
	one := float16.Fromfloat32(1).Bits()
	half := float16.Fromfloat32(0.5).Bits()
	// Q4_1: d = 1, m = 0.5, byte 0 = 0x3A: weight 0 = 10·1 + 0.5, weight 16 = 3 + 0.5.
	q41 := make([]byte, 20)
	binary.LittleEndian.PutUint16(q41, one)
	binary.LittleEndian.PutUint16(q41[2:], half)
	q41[4] = 0x3A
	// IQ4_NL: d = 0.5, byte 1 = 0xF0: weight 1 = 0.5·K[0] = −63.5, weight 17 = 0.5·113.
	iq := make([]byte, 18)
	binary.LittleEndian.PutUint16(iq, half)
	iq[3] = 0xF0
	// Q6_K: d = 0.5, scale 0 = −2, ql[0] = 0x0F, qh[0] = 0x01: q = 15 + 16 − 32 = −1,
	// weight 0 = (0.5·−2)·−1 = 1; weight 1 has q = 0 − 32: (−1)·(−32) = 32.
	q6 := make([]byte, 210)
	binary.LittleEndian.PutUint16(q6[208:], half)
	q6[192] = 0xFE
	q6[0], q6[128] = 0x0F, 0x01
	// Q4_K: d = 1, dmin = 0.5, sub-block 1 scale 3 (byte 1), min 2 (byte 5),
	// qs[0] = 0x70: weight 32 = 3·7 − 0.5·2 = 20; weight 0: scale 0, min 0 → 0.
	q4k := make([]byte, 144)
	binary.LittleEndian.PutUint16(q4k, one)
	binary.LittleEndian.PutUint16(q4k[2:], half)
	q4k[4+1], q4k[4+5], q4k[16] = 3, 2, 0x70
	for _, c := range []struct {
		t    GGMLType
		b    []byte
		idx  []int
		want []float32
	}{
		{GGMLQ4_1, q41, []int{0, 16, 1}, []float32{10.5, 3.5, 0.5}},
		{GGMLIQ4_NL, iq, []int{1, 17, 0}, []float32{-63.5, 56.5, -63.5}},
		{GGMLQ6_K, q6, []int{0, 1}, []float32{1, 32}},
		{GGMLQ4_K, q4k, []int{32, 0, 33}, []float32{20, 0, -1}},
	} {
		y := make([]float32, c.t.BlockElems())
		if err := DequantizeGGML(c.t, c.b, y); err != nil {
			t.Fatal(err)
		}
		for k, i := range c.idx {
			if y[i] != c.want[k] {
				t.Errorf("%v weight %d = %v, want %v", c.t, i, y[i], c.want[k])
			}
		}
	}
	if err := DequantizeGGML(GGMLQ4_K, make([]byte, 143), make([]float32, 256)); err == nil {
		t.Error("partial block accepted")
	}
	if err := DequantizeGGML(GGMLType(1), nil, nil); err == nil {
		t.Error("unknown type accepted")
	}
}
