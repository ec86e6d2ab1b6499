//go:build unix

package atomicfile

import (
	"errors"
	"math"
	"syscall"
)

// alive reports whether process pid exists. Signal 0 checks without sending;
// EPERM means it exists under another user. A PID reused since the writer
// died reads as alive, which only keeps a leftover longer.
func alive(pid int) bool {
	switch {
	case pid <= 0: // not a writer's PID, and kill(0 or -1) means a group: keep the file
		return true
	case pid > math.MaxInt32: // no process has it (pid_t is 32 bits)
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
