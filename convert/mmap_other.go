//go:build !unix

package convert

import "os"

// mapFile reads the whole file where mmap is not available.
func mapFile(f *os.File, size int64) ([]byte, bool, error) { return readWhole(f, size) }

func unmapFile(b []byte) error { return nil }

func releasePages(b []byte) {}
