//go:build unix

package mlb_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, so a benchmark can report
// throughput per CPU second, which other load on a shared machine distorts far
// less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
