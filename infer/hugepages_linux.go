package infer

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeAlloc maps n bytes of anonymous memory aligned to 2 MiB and asks for
// transparent huge pages (MADV_HUGEPAGE). release unmaps it.
func hugeAlloc(n int) ([]byte, func() error, error) {
	const huge = 2 << 20
	raw, err := unix.Mmap(-1, 0, n+huge, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	release := func() error { return unix.Munmap(raw) }
	skip := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % huge); r != 0 {
		skip = huge - r
	}
	b := raw[skip : skip+n : skip+n]
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		release()
		return nil, nil, err
	}
	return b, release, nil
}
