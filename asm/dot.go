package asm

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
