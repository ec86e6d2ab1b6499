//go:build !linux

package infer

// physicalMemory returns 0: unknown on this system.
func physicalMemory() int64 { return 0 }
