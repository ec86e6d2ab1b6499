//go:build unix && !linux

package main

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of this process (0 where it
// is unknown): run -v reports the CPU of prefill and generation, which a
// loaded machine distorts far less than their wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
