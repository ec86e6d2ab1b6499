//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package hub

// lockFile is lockFileNoFlock on this platform.
func lockFile(path string) (func(), error) { return lockFileNoFlock(path) }
