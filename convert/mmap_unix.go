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
	// Madvise needs a page-aligned start: widen to the enclosing pages
	// inside the mapping is not possible from a sub-slice, so round inward.
	const page = 4096
	start := addrOf(b)
	first := (page - start%page) % page
	if uintptr(len(b)) <= first+page {
		return
	}
	n := (uintptr(len(b)) - first) / page * page
	_ = unix.Madvise(b[first:first+n], unix.MADV_DONTNEED)
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
