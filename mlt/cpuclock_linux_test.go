//go:build linux

package mlt

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPUTime returns the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID), which a busy shared machine disturbs far less
// than the wall clock. The caller must hold runtime.LockOSThread.
func threadCPUTime() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
