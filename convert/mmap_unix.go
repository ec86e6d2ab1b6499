//go:build unix

package convert

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. The mapping is private to this
// process; release gives pages back once a tensor has been converted.
func mapFile(f *os.File, size int64) ([]byte, bool, error) {
	if size == 0 {
		return nil, false, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

func unmapFile(b []byte) error { return unix.Munmap(b) }

// releasePages tells the kernel that the pages of b will not be needed soon,
// so a long conversion's resident memory stays near one tensor, not the
// whole checkpoint. The data stays valid: it is read back from the file.
func releasePages(b []byte) {
	if len(b) == 0 {
		return
	}
	// Madvise takes whole pages, from a page-aligned start (the page size is
	// the system's, 16 KiB or 64 KiB on some arm64 kernels). Round inward to
	// the pages b covers entirely, so a page shared with a neighbouring tensor
	// stays resident.
	page := uintptr(os.Getpagesize())
	start := addrOf(b)
	first := (page - start%page) % page
	if uintptr(len(b)) <= first+page {
		return
	}
	n := (uintptr(len(b)) - first) / page * page
	_ = unix.Madvise(b[first:first+n], unix.MADV_DONTNEED)
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
