package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// The K-quant dequantizers are checked against a second formulation: each
// element's bits located from the block layouts of ggml-common.h and the
// packing loops of the reference quantizers (quantize_row_q*_K_ref), not the
// dequantizers' loop structure.

// kBlock returns a random block of type t with sane f16 scales at the given
// offsets.
func kBlock(r *rand.Rand, t Type, f16At ...int) []byte {
	b := make([]byte, t.BlockBytes())
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	for _, o := range f16At {
		binary.LittleEndian.PutUint16(b[o:], float16.Fromfloat32(float32(r.Float64()*0.1+0.001)).Bits())
	}
	return b
}

func h16(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// scale6 unpacks the j-th 6-bit scale and min of Q4_K/Q5_K as
// quantize_row_q4_K_ref packs them: j < 4 in the low 6 bits of bytes j and
// j+4; j ≥ 4 low nibbles in byte j+4, high 2 bits in the top of bytes j-4
// (scale) and j (min).
func scale6(s []byte, j int) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | s[j-4]>>6<<4, s[j+4]>>4 | s[j]>>6<<4
}

func TestDequantK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		// Q2_K: scales[16] | qs[64] | d | dmin.
		b := kBlock(r, Q2_K, 80, 82)
		want := make([]float32, 256)
		for e := range want {
			n, g, l := e/128, e%128/32, e%32
			q := b[16+32*n+l] >> (2 * g) & 3
			sc := b[8*n+2*g+l/16]
			want[e] = float32(h16(b[80:])*float32(sc&15))*float32(q) - h16(b[82:])*float32(sc>>4)
		}
		checkDequant(t, Q2_K, b, want)

		// Q3_K: hmask[32] | qs[64] | scales[12] | d.
		b = kBlock(r, Q3_K, 108)
		for e := range want {
			n, g, l := e/128, e%128/32, e%32
			q := int(b[32+32*n+l] >> (2 * g) & 3)
			if b[l]>>(4*n+g)&1 == 0 {
				q -= 4
			}
			j := 8*n + 2*g + l/16
			s := int(b[96+j%8]>>(4*(j/8))&15 | (b[96+8+j%4]>>(2*(j/4))&3)<<4)
			want[e] = h16(b[108:]) * float32(s-32) * float32(q)
		}
		checkDequant(t, Q3_K, b, want)

		// Q4_K: d | dmin | scales[12] | qs[128].
		b = kBlock(r, Q4_K, 0, 2)
		for e := range want {
			g, hi, l := e/64, e%64/32, e%32
			q := b[16+32*g+l] >> (4 * hi) & 15
			sc, m := scale6(b[4:16], 2*g+hi)
			want[e] = float32(h16(b)*float32(sc))*float32(q) - h16(b[2:])*float32(m)
		}
		checkDequant(t, Q4_K, b, want)

		// Q5_K: d | dmin | scales[12] | qh[32] | qs[128].
		b = kBlock(r, Q5_K, 0, 2)
		for e := range want {
			g, hi, l := e/64, e%64/32, e%32
			q := int(b[48+32*g+l]>>(4*hi)&15) + int(b[16+l]>>(2*g+hi)&1)*16
			sc, m := scale6(b[4:16], 2*g+hi)
			want[e] = float32(h16(b)*float32(sc))*float32(q) - h16(b[2:])*float32(m)
		}
		checkDequant(t, Q5_K, b, want)

		// Q6_K: ql[128] | qh[64] | scales[16] | d.
		b = kBlock(r, Q6_K, 208)
		for e := range want {
			n, qd, l := e/128, e%128/32, e%32
			lo := b[64*n+l+32*(qd%2)] >> (4 * (qd / 2)) & 15
			hb := b[128+32*n+l] >> (2 * qd) & 3
			q := int(lo|hb<<4) - 32
			sc := int8(b[192+8*n+l/16+2*qd])
			want[e] = h16(b[208:]) * float32(sc) * float32(q)
		}
		checkDequant(t, Q6_K, b, want)
	}
}

func checkDequant(t *testing.T, typ Type, b []byte, want []float32) {
	t.Helper()
	got := make([]float32, len(want))
	if err := Dequantize(typ, b, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s element %d: got %v, want %v", typ, i, got[i], want[i])
		}
	}
}

// TestDequantSmall checks the 32-element types on hand-made blocks.
func TestDequantSmall(t *testing.T) {
	d := float16.Fromfloat32(0.5).Bits()
	m := float16.Fromfloat32(-1).Bits()
	le := binary.LittleEndian
	qs := make([]byte, 16)
	for j := range qs {
		qs[j] = byte(j) | byte(15-j)<<4 // element j = j, element j+16 = 15-j
	}
	elem := func(j int) int { // the nibble of element j
		if j < 16 {
			return j
		}
		return 31 - j
	}
	cases := []struct {
		typ  Type
		b    []byte
		want func(j int) float32
	}{
		{Q4_0, append(le.AppendUint16(nil, d), qs...), func(j int) float32 { return float32(elem(j)-8) * 0.5 }},
		{Q4_1, append(le.AppendUint16(le.AppendUint16(nil, d), m), qs...), func(j int) float32 { return float32(elem(j))*0.5 - 1 }},
		// qh bit j set for odd j: the fifth bit adds 16.
		{Q5_0, append(le.AppendUint32(le.AppendUint16(nil, d), 0xaaaaaaaa), qs...), func(j int) float32 { return float32(elem(j)+16*(j%2)-16) * 0.5 }},
		{Q5_1, append(le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, d), m), 0xaaaaaaaa), qs...), func(j int) float32 { return float32(elem(j)+16*(j%2))*0.5 - 1 }},
	}
	for _, c := range cases {
		want := make([]float32, 32)
		for j := range want {
			want[j] = c.want(j)
		}
		checkDequant(t, c.typ, c.b, want)
	}
	q8 := le.AppendUint16(nil, d)
	for j := range 32 {
		q8 = append(q8, byte(int8(j-16)))
	}
	want := make([]float32, 32)
	for j := range want {
		want[j] = float32(j-16) * 0.5
	}
	checkDequant(t, Q8_0, q8, want)
	bf := []byte{0x80, 0x3f, 0x00, 0xc0} // bf16 1.0, -2.0
	checkDequant(t, BF16, bf, []float32{1, -2})
	if err := Dequantize(IQ2_XS, make([]byte, 74), make([]float32, 256)); err == nil {
		t.Error("IQ2_XS dequantized")
	}
	if err := Dequantize(Q8_0, make([]byte, 33), make([]float32, 32)); err == nil {
		t.Error("short block accepted")
	}
}

// TestDequantBlocks: blocks are independent, so dequantizing several blocks at once
// gives, bit for bit, each block dequantized alone; and a length that does not
// match is refused with the byte count a whole number of blocks needs.
func TestDequantBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, typ := range []Type{F32, F16, BF16, F64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		bs, bb := int(types[typ].block), int(types[typ].bytes)
		const nb = 3
		src := make([]byte, nb*bb)
		for i := range src {
			src[i] = byte(r.UintN(256))
		}
		all := make([]float32, nb*bs)
		if err := Dequantize(typ, src, all); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for b := 0; b < nb; b++ {
			one := make([]float32, bs)
			if err := Dequantize(typ, src[b*bb:(b+1)*bb], one); err != nil {
				t.Fatalf("%s block %d: %v", typ, b, err)
			}
			for i, v := range one {
				if got := all[b*bs+i]; math.Float32bits(got) != math.Float32bits(v) {
					t.Fatalf("%s block %d element %d: %v in a %d-block run, %v alone", typ, b, i, got, nb, v)
				}
			}
		}
		want := fmt.Sprintf("(want %d)", 2*bb)
		if err := Dequantize(typ, src[:2*bb+1], make([]float32, 2*bs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: one byte too many: got %v, want an error ending %q", typ, err, want)
		}
	}
}
