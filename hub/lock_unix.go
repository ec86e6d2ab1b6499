//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hub

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path (created if needed), waiting for
// another process that holds it; the returned function releases it.
// The kernel releases a killed process's lock.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
