//go:build !unix

package atomicfile

import "os"

// alive reports whether process pid exists: on Windows, FindProcess opens the
// process and fails when there is none.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
