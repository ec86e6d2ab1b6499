//go:build !linux

package grammar

import "time"

var start = time.Now()

// threadCPU falls back to wall time where no thread CPU clock is read.
func threadCPU() time.Duration { return time.Since(start) }

const threadCPUName = "µs-wall-mask/token"
