//go:build !unix

package testenv

import "time"

// CPUTime returns 0: the process CPU time is not read on this system.
func CPUTime() time.Duration { return 0 }
