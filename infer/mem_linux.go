package infer

import (
	"math"

	"golang.org/x/sys/unix"
)

// physicalMemory returns the machine's RAM in bytes, or math.MaxInt64 (no
// known limit) when unknown.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return math.MaxInt64
	}
	return int64(si.Totalram) * int64(si.Unit)
}
