//go:build !unix

package main

import "time"

// processCPU is unknown here: 0, and run -v reports no CPU time.
func processCPU() time.Duration { return 0 }
