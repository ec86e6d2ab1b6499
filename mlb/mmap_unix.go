//go:build unix

package mlb

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps the whole file read-only. ok is false when the file cannot be
// mapped (the caller then reads it).
func mmapFile(f *os.File, size int) (data []byte, unmap func() error, ok bool) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, false
	}
	return b, func() error { return unix.Munmap(b) }, true
}
