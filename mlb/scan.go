package mlb

import (
	"encoding/binary"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasByte80 returns a word whose high bit is set in some byte iff some byte of w
// is 0x80 (int8 -128): w^msb turns exactly those bytes into 0, and
// (x-lsb) &^ x & msb is non-zero iff x has a zero byte (the classic SWAR test;
// borrows can mark bytes above a real zero, but never when there is none).
func hasByte80(w uint64) uint64 {
	x := w ^ msb
	return (x - lsb) &^ x
}

// findMinus128 returns the index of the first byte of b equal to 0x80, or -1.
// It reads 64 bytes per iteration as eight words and tests them together, so a
// clean multi-GB array is scanned at memory speed; only a hit falls back to
// bytes to find its position.
func findMinus128(b []byte) int {
	i := 0
	for ; len(b)-i >= 64; i += 64 {
		p := b[i : i+64 : i+64]
		t := hasByte80(binary.LittleEndian.Uint64(p[0:])) |
			hasByte80(binary.LittleEndian.Uint64(p[8:])) |
			hasByte80(binary.LittleEndian.Uint64(p[16:])) |
			hasByte80(binary.LittleEndian.Uint64(p[24:])) |
			hasByte80(binary.LittleEndian.Uint64(p[32:])) |
			hasByte80(binary.LittleEndian.Uint64(p[40:])) |
			hasByte80(binary.LittleEndian.Uint64(p[48:])) |
			hasByte80(binary.LittleEndian.Uint64(p[56:]))
		if t&msb != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] == 0x80 {
			return i
		}
	}
	return -1
}
