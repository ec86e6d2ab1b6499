//go:build !unix

package mlb

import "os"

// mmapFile is unavailable here; the caller reads the file.
func mmapFile(f *os.File, size int) (data []byte, unmap func() error, ok bool) {
	return nil, nil, false
}
