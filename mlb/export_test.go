package mlb

// FindMinus128 exposes the scan to the external benchmarks.
var FindMinus128 = findMinus128
