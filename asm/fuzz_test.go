package asm

import (
	"encoding/binary"
	"math"
	"testing"
)

// fuzzByte returns the i-th byte of data, cycling (0 when data is empty).
func fuzzByte(data []byte, i int) byte {
	if len(data) == 0 {
		return 0
	}
	return data[i%len(data)]
}

// fuzzScale reads float32 bits from data: any value, NaN, Inf and
// subnormals included.
func fuzzScale(data []byte, i int) float32 {
	var b [4]byte
	for k := range b {
		b[k] = fuzzByte(data, 4*i+k+7)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
}

// FuzzProducts compares every variant's Dot, MatVec and MatMul (Q8_0 and
// Q4_0, plain and packed) with the generic ones on weights, activations and
// scales from the fuzzer; when data has an odd length, the weight scales are binary16
// values, so that the packed layout with f16 scales is run too. Activation
// quants of -128 become -127 (the kernels' precondition).
func FuzzProducts(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0x80, 0x7f, 0xff}, uint8(1), uint8(1), uint8(1))
	f.Add([]byte{0x80, 0x81, 0x7f, 0, 0, 0xc0, 0x7f, 0x80, 0, 0, 0x80, 0x7f}, uint8(33), uint8(5), uint8(3))
	f.Add([]byte{0xff, 0xff, 0x7f, 0x7f, 0x01, 0, 0, 0}, uint8(17), uint8(4), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, nbSel, nSel, rowsSel uint8) {
		nb := 1 + int(nbSel)%40
		n := 1 + int(nSel)%9
		rows := 1 + int(rowsSel)%20
		p := problem{nb: nb, rows: rows, n: n}
		p.w8 = make([]int8, rows*nb*32)
		for i := range p.w8 {
			p.w8[i] = int8(fuzzByte(data, i))
		}
		p.w4 = make([]byte, rows*nb*16)
		for i := range p.w4 {
			p.w4[i] = fuzzByte(data, 3*i+1)
		}
		p.a = make([]int8, n*nb*32)
		for i := range p.a {
			p.a[i] = max(int8(fuzzByte(data, 5*i+2)), -127)
		}
		p.dw = make([]float32, rows*nb)
		for i := range p.dw {
			p.dw[i] = fuzzScale(data, i)
			if len(data)%2 == 1 {
				p.dw[i] = F16ToF32(uint16(math.Float32bits(p.dw[i])))
			}
		}
		p.da = make([]float32, n*nb)
		for i := range p.da {
			p.da[i] = fuzzScale(data, 3*i+1)
		}
		w8, w4 := p.want()
		variants(t, func(t *testing.T) { p.check(t, int(nbSel)%4, w8, w4) })
	})
}

// FuzzQuantize compares every variant's QuantizeQ8_0 with the generic one on
// any float32 bits.
func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}, uint8(1))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0x80, 0x7f, 0, 0, 0, 0x80}, uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, nbSel uint8) {
		nb := 1 + int(nbSel)%40
		x := make([]float32, nb*32)
		for i := range x {
			x[i] = fuzzScale(data, i)
		}
		variants(t, func(t *testing.T) { checkQuantize(t, "fuzz", x, int(nbSel)%3) })
	})
}
