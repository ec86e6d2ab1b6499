//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime returns the user+system CPU time of this process, so a benchmark can
// report throughput per CPU second, which other load on a shared machine
// distorts far less than wall time. It returns 0 where the time is unknown;
// callers report nothing then.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
