//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

// alive reports whether process pid exists. Signal 0 checks without sending;
// EPERM means it exists under another user. A PID reused since the writer
// died reads as alive, which only keeps a leftover longer.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
