package mlb

import "golang.org/x/sys/unix"

// mapPopulate pre-faults the mapping: the loader reads every Q8 byte at once, and
// faulting page by page costs more than the scan.
const mapPopulate = unix.MAP_POPULATE
