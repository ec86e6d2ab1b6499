//go:build !unix

package mmap

import "os"

func mapFile(f *os.File, size int) ([]byte, bool) { return nil, false }

func unmapFile(b []byte) error { return nil }
