package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
)

// Dequantize decodes whole blocks of type t from src into dst (len(dst)
// elements, a multiple of the block size; src exactly their bytes). The
// quantized types follow ggml's reference dequantizers
// (ggml/src/ggml-quants.c, dequantize_row_*) operation for operation in
// float32, every product rounded before a sum (no fused multiply-add). IQ,
// ternary and other types are refused by name.
func Dequantize(t Type, src []byte, dst []float32) error {
	info, ok := types[t]
	if !ok || info.block == 0 {
		return fmt.Errorf("gguf: cannot dequantize tensor type %s", t)
	}
	n := len(dst)
	if uint64(n)%info.block != 0 || uint64(len(src)) != uint64(n)/info.block*info.bytes {
		return fmt.Errorf("gguf: %s: %d bytes for %d values (want %d)", t, len(src), n, uint64(n)/info.block*info.bytes)
	}
	le := binary.LittleEndian
	h := func(b []byte) float32 { return float16.Frombits(le.Uint16(b)).Float32() }
	bs, bb := int(info.block), int(info.bytes)
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = h(src[2*i:])
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(le.Uint16(src[2*i:])) << 16)
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(le.Uint64(src[8*i:])))
		}
	default:
		f := dequantizers[t]
		if f == nil {
			return fmt.Errorf("gguf: tensor type %s cannot be dequantized (supported: F32, F16, BF16, F64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)", t)
		}
		for i := 0; i < n/bs; i++ {
			f(src[i*bb:(i+1)*bb], dst[i*bs:(i+1)*bs])
		}
	}
	return nil
}

// dequantizers decode one block each.
var dequantizers = map[Type]func(b []byte, y []float32){
	Q4_0: dequantQ4_0, Q4_1: dequantQ4_1, Q5_0: dequantQ5_0, Q5_1: dequantQ5_1, Q8_0: dequantQ8_0,
	Q2_K: dequantQ2_K, Q3_K: dequantQ3_K, Q4_K: dequantQ4_K, Q5_K: dequantQ5_K, Q6_K: dequantQ6_K,
}

func f16At(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// block_q4_0: d (f16), qs[16]: element j in the low nibble of qs[j], j+16 in the high one.
func dequantQ4_0(b []byte, y []float32) {
	d := f16At(b)
	for j := range 16 {
		y[j] = float32(int(b[2+j]&0xf)-8) * d
		y[j+16] = float32(int(b[2+j]>>4)-8) * d
	}
}

// block_q4_1: d, m (f16), qs[16].
func dequantQ4_1(b []byte, y []float32) {
	d, m := f16At(b), f16At(b[2:])
	for j := range 16 {
		y[j] = float32(float32(b[4+j]&0xf)*d) + m
		y[j+16] = float32(float32(b[4+j]>>4)*d) + m
	}
}

// block_q5_0: d (f16), qh (u32: the fifth bits), qs[16].
func dequantQ5_0(b []byte, y []float32) {
	d := f16At(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	for j := range 16 {
		h0 := uint8(qh>>j<<4) & 0x10
		h1 := uint8(qh>>(j+12)) & 0x10
		y[j] = float32(int32(b[6+j]&0xf|h0)-16) * d
		y[j+16] = float32(int32(b[6+j]>>4|h1)-16) * d
	}
}

// block_q5_1: d, m (f16), qh (u32), qs[16].
func dequantQ5_1(b []byte, y []float32) {
	d, m := f16At(b), f16At(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	for j := range 16 {
		h0 := uint8(qh>>j<<4) & 0x10
		h1 := uint8(qh>>(j+12)) & 0x10
		y[j] = float32(float32(b[8+j]&0xf|h0)*d) + m
		y[j+16] = float32(float32(b[8+j]>>4|h1)*d) + m
	}
}

// block_q8_0: d (f16), qs[32] (int8).
func dequantQ8_0(b []byte, y []float32) {
	d := f16At(b)
	for j := range 32 {
		y[j] = float32(int8(b[2+j])) * d
	}
}

// block_q2_K: scales[16] (4-bit scale | 4-bit min), qs[64], d, dmin (f16).
func dequantQ2_K(b []byte, y []float32) {
	scales, qs := b[:16], b[16:80]
	d, dmin := f16At(b[80:]), f16At(b[82:])
	is, o := 0, 0
	for n := 0; n < 256; n += 128 {
		q := qs[n/4:]
		for shift := 0; shift < 8; shift += 2 {
			for half := range 2 {
				sc := scales[is]
				is++
				dl, ml := d*float32(sc&0xf), dmin*float32(sc>>4)
				for l := range 16 {
					y[o] = float32(dl*float32(int8(q[l+16*half]>>shift&3))) - ml
					o++
				}
			}
		}
	}
}

// block_q3_K: hmask[32], qs[64], scales[12] (16 packed 6-bit scales), d (f16).
func dequantQ3_K(b []byte, y []float32) {
	hm, qs, sb := b[:32], b[32:96], b[96:108]
	dAll := f16At(b[108:])
	le := binary.LittleEndian
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	var aux [4]uint32
	aux[0], aux[1], aux[2] = le.Uint32(sb), le.Uint32(sb[4:]), le.Uint32(sb[8:])
	tmp := aux[2]
	aux[2] = (aux[0]>>4)&kmask2 | ((tmp>>4)&kmask1)<<4
	aux[3] = (aux[1]>>4)&kmask2 | ((tmp>>6)&kmask1)<<4
	aux[0] = aux[0]&kmask2 | ((tmp>>0)&kmask1)<<4
	aux[1] = aux[1]&kmask2 | ((tmp>>2)&kmask1)<<4
	var scales [16]int8
	for i := range 16 {
		scales[i] = int8(aux[i/4] >> (8 * (i % 4)))
	}
	is, o := 0, 0
	m := uint8(1)
	for n := 0; n < 256; n += 128 {
		q := qs[n/4:]
		for shift := 0; shift < 8; shift += 2 {
			for half := range 2 {
				dl := dAll * float32(int(scales[is])-32)
				is++
				for l := range 16 {
					v := int(int8(q[l+16*half] >> shift & 3))
					if hm[l+16*half]&m == 0 {
						v -= 4
					}
					y[o] = dl * float32(v)
					o++
				}
			}
			m <<= 1
		}
	}
}

// scaleMinK4 unpacks the j-th 6-bit scale and min of a Q4_K/Q5_K block
// (ggml's get_scale_min_k4).
func scaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// block_q4_K: d, dmin (f16), scales[12], qs[128].
func dequantQ4_K(b []byte, y []float32) {
	d, dmin := f16At(b), f16At(b[2:])
	scales, qs := b[4:16], b[16:144]
	o := 0
	for j, is := 0, 0; j < 256; j, is = j+64, is+2 {
		q := qs[j/2:]
		sc, m := scaleMinK4(is, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		for l := range 32 {
			y[o+l] = float32(d1*float32(q[l]&0xf)) - m1
			y[o+32+l] = float32(d2*float32(q[l]>>4)) - m2
		}
		o += 64
	}
}

// block_q5_K: d, dmin (f16), scales[12], qh[32], qs[128].
func dequantQ5_K(b []byte, y []float32) {
	d, dmin := f16At(b), f16At(b[2:])
	scales, qh, qs := b[4:16], b[16:48], b[48:176]
	o := 0
	u1, u2 := uint8(1), uint8(2)
	for j, is := 0, 0; j < 256; j, is = j+64, is+2 {
		ql := qs[j/2:]
		sc, m := scaleMinK4(is, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		for l := range 32 {
			h1, h2 := 0, 0
			if qh[l]&u1 != 0 {
				h1 = 16
			}
			if qh[l]&u2 != 0 {
				h2 = 16
			}
			y[o+l] = float32(d1*float32(int(ql[l]&0xf)+h1)) - m1
			y[o+32+l] = float32(d2*float32(int(ql[l]>>4)+h2)) - m2
		}
		o += 64
		u1 <<= 2
		u2 <<= 2
	}
}

// block_q6_K: ql[128], qh[64], scales[16] (int8), d (f16).
func dequantQ6_K(b []byte, y []float32) {
	d := f16At(b[208:])
	for n := 0; n < 2; n++ {
		ql, qh, sc := b[64*n:], b[128+32*n:], b[192+8*n:]
		yy := y[128*n:]
		for l := range 32 {
			is := l / 16
			q1 := int(int8(ql[l]&0xf|(qh[l]>>0&3)<<4)) - 32
			q2 := int(int8(ql[l+32]&0xf|(qh[l]>>2&3)<<4)) - 32
			q3 := int(int8(ql[l]>>4|(qh[l]>>4&3)<<4)) - 32
			q4 := int(int8(ql[l+32]>>4|(qh[l]>>6&3)<<4)) - 32
			yy[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
			yy[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
			yy[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
			yy[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
		}
	}
}
