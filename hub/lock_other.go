//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hub

import "os"

// lockFile creates the lock file; without flock two processes are not kept
// apart on this platform (the sha256 check still refuses a mixed blob).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
