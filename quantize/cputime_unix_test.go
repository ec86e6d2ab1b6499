//go:build unix

package quantize

import (
	"syscall"
	"time"
)

// cpuTime returns the user+system CPU time of this process, so benchmarks can report
// throughput per CPU-second, which a machine shared with other jobs inflates less
// than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
