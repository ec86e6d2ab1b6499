//go:build !linux

package infer

func hugeAlloc(n int) ([]byte, func() error, error) { return hugeAllocUnsupported(n) }
