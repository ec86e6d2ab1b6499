package asm

// reduce16 is the final reduction of the definition (see the package comment).
func reduce16(acc *[16]float32) float32 {
	var v [8]float32
	for l := range 8 {
		v[l] = acc[l] + acc[8+l]
	}
	u0 := v[0] + v[4]
	u1 := v[1] + v[5]
	u2 := v[2] + v[6]
	u3 := v[3] + v[7]
	return (u0 + u2) + (u1 + u3)
}

func checkDot(name string, wlen, wPerBlock int, dw []float32, a []int8, da []float32) int {
	if len(a)%BlockSize != 0 {
		panic("asm: " + name + ": len(a) must be a multiple of 32")
	}
	nb := len(a) / BlockSize
	if wlen < nb*wPerBlock || len(dw) < nb || len(da) < nb {
		panic("asm: " + name + ": w, dw or da too short for len(a)")
	}
	return nb
}

func checkMatVec(name string, rows, wlen, wPerBlock int, dw []float32, a []int8, da []float32) int {
	if len(a)%BlockSize != 0 {
		panic("asm: " + name + ": len(a) must be a multiple of 32")
	}
	nb := len(a) / BlockSize
	if nb > 0 && wlen/(nb*wPerBlock) < rows || len(dw) < rows*nb || len(da) < nb {
		panic("asm: " + name + ": w, dw or da too short for len(out)×len(a)")
	}
	return nb
}

func checkMatMul(name string, out []float32, ldo, rows, wlen, wPerBlock int, dw []float32, a []int8, da []float32, n int) int {
	if n < 0 || rows < 0 || (n > 0 && len(a)%n != 0) {
		panic("asm: " + name + ": len(a) must be n × cols")
	}
	if n == 0 || rows == 0 {
		return 0
	}
	cols := len(a) / n
	if cols%BlockSize != 0 {
		panic("asm: " + name + ": cols must be a multiple of 32")
	}
	nb := cols / BlockSize
	if ldo < rows || len(out) < (n-1)*ldo+rows {
		panic("asm: " + name + ": out too short or ldo < rows")
	}
	if nb > 0 && wlen/(nb*wPerBlock) < rows || len(dw) < rows*nb || len(da) < n*nb {
		panic("asm: " + name + ": w, dw or da too short")
	}
	return nb
}
