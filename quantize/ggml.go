package quantize

import (
	"encoding/binary"
	"fmt"

	"github.com/x448/float16"
)

// GGMLType is one of the ggml block types a mixed .mlb file stores as ggml's
// own blocks (docs/FORMATS.md, "Mixed types"); the values are the type-table
// codes.
type GGMLType uint8

// The ggml block types, numbered as the .mlb type table numbers them.
const (
	GGMLQ4_1   GGMLType = 3
	GGMLQ5_0   GGMLType = 4
	GGMLQ4_K   GGMLType = 5
	GGMLQ5_K   GGMLType = 6
	GGMLQ6_K   GGMLType = 7
	GGMLIQ4_NL GGMLType = 8
	GGMLIQ4_XS GGMLType = 9
)

var ggmlTypes = map[GGMLType]struct {
	name         string
	elems, bytes int
}{
	GGMLQ4_1: {"Q4_1", 32, 20}, GGMLQ5_0: {"Q5_0", 32, 22}, GGMLQ4_K: {"Q4_K", 256, 144},
	GGMLQ5_K: {"Q5_K", 256, 176}, GGMLQ6_K: {"Q6_K", 256, 210}, GGMLIQ4_NL: {"IQ4_NL", 32, 18},
	GGMLIQ4_XS: {"IQ4_XS", 256, 136},
}

// String returns ggml's name ("Q4_K"), or "ggml(N)".
func (t GGMLType) String() string {
	if g, ok := ggmlTypes[t]; ok {
		return g.name
	}
	return fmt.Sprintf("ggml(%d)", uint8(t))
}

// BlockElems is the number of weights per block (32 or 256), 0 when unknown.
func (t GGMLType) BlockElems() int { return ggmlTypes[t].elems }

// BlockBytes is the size of one block in bytes, 0 when unknown.
func (t GGMLType) BlockBytes() int { return ggmlTypes[t].bytes }

// KValues is the IQ4_NL and IQ4_XS codebook (ggml's kvalues_iq4nl).
var KValues = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func f16(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// ScaleMinK4 returns the 6-bit scale and min of sub-block j (0…7) of a Q4_K or
// Q5_K block from its 12 scale bytes q (ggml's get_scale_min_k4).
func ScaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// DequantizeGGML writes the weights of the blocks src of type t into dst,
// len(dst) = len(src)/BlockBytes·BlockElems. Each weight is computed with the
// float32 operations docs/FORMATS.md lists, in that order, which are those of
// gguf-py's quants.py (and ggml's dequantize_row_*): for Q4_K (d·sc)·n −
// (dmin·m), each product and the difference rounded to float32. An explicit
// float32 conversion after every product keeps any platform from fusing it
// into an FMA.
func DequantizeGGML(t GGMLType, src []byte, dst []float32) error {
	be, bb := t.BlockElems(), t.BlockBytes()
	if be == 0 {
		return fmt.Errorf("quantize: unknown ggml block type %d", uint8(t))
	}
	if len(src)%bb != 0 || len(dst) != len(src)/bb*be {
		return fmt.Errorf("quantize: %v: %d bytes and %d weights are not whole blocks of %d bytes / %d weights", t, len(src), len(dst), bb, be)
	}
	for i := 0; i < len(src)/bb; i++ {
		b, y := src[i*bb:(i+1)*bb], dst[i*be:(i+1)*be]
		switch t {
		case GGMLQ4_1:
			d, m := f16(b), f16(b[2:])
			for j, v := range b[4:20] {
				y[j] = float32(d*float32(v&15)) + m
				y[j+16] = float32(d*float32(v>>4)) + m
			}
		case GGMLQ5_0:
			d, qh := f16(b), binary.LittleEndian.Uint32(b[2:])
			for j, v := range b[6:22] {
				lo := int(v&15) | int(qh>>j&1)<<4
				hi := int(v>>4) | int(qh>>(j+16)&1)<<4
				y[j] = d * float32(lo-16)
				y[j+16] = d * float32(hi-16)
			}
		case GGMLIQ4_NL:
			d := f16(b)
			for j, v := range b[2:18] {
				y[j] = d * float32(KValues[v&15])
				y[j+16] = d * float32(KValues[v>>4])
			}
		case GGMLQ4_K, GGMLQ5_K:
			d, dmin := f16(b), f16(b[2:])
			sc, qs := b[4:16], b[16:144]
			var qh []byte
			if t == GGMLQ5_K {
				qh, qs = b[16:48], b[48:176]
			}
			for s := 0; s < 8; s++ {
				c, m := ScaleMinK4(s, sc)
				d1, m1 := float32(d*float32(c)), float32(dmin*float32(m))
				q := qs[32*(s/2) : 32*(s/2)+32]
				for l, v := range q {
					n := int(v & 15)
					if s%2 == 1 {
						n = int(v >> 4)
					}
					if qh != nil {
						n |= int(qh[l]>>s&1) << 4
					}
					y[32*s+l] = float32(d1*float32(n)) - m1
				}
			}
		case GGMLQ6_K:
			ql, qh, sc, d := b[0:128], b[128:192], b[192:208], f16(b[208:])
			for i := 0; i < 256; i++ {
				h, j := i/128, i%128
				l, g := j%32, j/32
				q := int(ql[64*h+32*(g%2)+l] & 15)
				if g >= 2 {
					q = int(ql[64*h+32*(g%2)+l] >> 4)
				}
				q |= int(qh[32*h+l]>>(2*g)&3) << 4
				y[i] = float32(d*float32(int8(sc[i/16]))) * float32(q-32)
			}
		case GGMLIQ4_XS:
			d, sh, sl, qs := f16(b), binary.LittleEndian.Uint16(b[2:]), b[4:8], b[8:136]
			for s := 0; s < 8; s++ {
				ls := int(sl[s/2]>>(4*(s%2))&15) | int(sh>>(2*s)&3)<<4
				dl := d * float32(ls-32)
				for j, v := range qs[16*s : 16*s+16] {
					y[32*s+j] = dl * float32(KValues[v&15])
					y[32*s+j+16] = dl * float32(KValues[v>>4])
				}
			}
		}
	}
	return nil
}
