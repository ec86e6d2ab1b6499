// Package mmap maps whole files read-only for the format readers, falling back
// to reading them where mapping is unavailable.
package mmap

import (
	"fmt"
	"io"
	"math"
	"os"
)

// noMap makes Map read the file as it does where mmap is unavailable
// (mmap_other.go), so that tests on systems with mmap run that path too.
var noMap bool

// Map maps size bytes of f read-only. An empty file cannot be mapped and gives
// an empty slice; a size that does not fit an int is refused. Where mmap fails
// or does not exist the file is read into memory and mapped is false. unmap
// releases the mapping (a no-op for a read file).
func Map(f *os.File, size int64) (data []byte, unmap func() error, mapped bool, err error) {
	if size < 0 || uint64(size) > math.MaxInt {
		return nil, nil, false, fmt.Errorf("file of %d bytes is too large to map on this platform", size)
	}
	if size == 0 {
		return []byte{}, func() error { return nil }, false, nil
	}
	if !noMap {
		if b, ok := mapFile(f, int(size)); ok {
			return b, func() error { return unmapFile(b) }, true, nil
		}
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, nil, false, err
	}
	return b, func() error { return nil }, false, nil
}
