package grammar

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the calling thread: on a loaded machine a
// mask's wall time is mostly time spent waiting for a CPU. Callers lock
// the goroutine to its thread (runtime.LockOSThread).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

const threadCPUName = "µs-cpu-mask/token"

var _ = runtime.LockOSThread
