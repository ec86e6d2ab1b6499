package hub

import "os"

// lockFileNoFlock is lockFile where there is no flock (Windows, wasm, plan9):
// it creates the lock file but does not keep two processes apart (the sha256
// check still refuses a mixed blob). It is compiled everywhere so that tests
// on other systems run it too.
func lockFileNoFlock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
