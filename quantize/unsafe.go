package quantize

import "unsafe"

// int8s reinterprets b as int8 without copying.
func int8s(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}
