//go:build unix && !linux

package cputime

import (
	"syscall"
	"time"
)

// Process returns the user+system CPU time of this process (0 where it is
// unknown).
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
