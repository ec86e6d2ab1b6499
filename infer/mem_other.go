//go:build !linux

package infer

import "math"

// physicalMemory returns math.MaxInt64: unknown on this system, no known limit.
func physicalMemory() int64 { return math.MaxInt64 }
