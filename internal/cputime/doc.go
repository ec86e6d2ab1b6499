// Package cputime reads the CPU time of this process, so that `krafla run -v`
// and the benchmarks can report work per CPU second, which other load on a
// shared machine distorts far less than wall time. Where the time cannot be
// read it is 0, and callers report nothing.
package cputime
