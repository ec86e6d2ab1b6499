//go:build !linux

package mlt

import "time"

// threadCPUTime is unavailable here; benchmarks then report wall-clock figures only.
func threadCPUTime() (time.Duration, bool) { return 0, false }
