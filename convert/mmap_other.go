//go:build !unix

package convert

import (
	"io"
	"os"
)

// mapFile reads the whole file where mmap is not available.
func mapFile(f *os.File, size int64) ([]byte, bool, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, false, err
	}
	return b, false, nil
}

func unmapFile(b []byte) error { return nil }

func releasePages(b []byte) {}
