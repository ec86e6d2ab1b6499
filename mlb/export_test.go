package mlb

// FindMinus128 exposes the scan to the external benchmarks.
var FindMinus128 = findMinus128

// BodyEnd exposes the file size a valid header implies, without writing the
// file, to tests of headers too large to write.
func BodyEnd(h *Header) (end int64, n int, err error) {
	if err := h.Validate(); err != nil {
		return 0, 0, err
	}
	return bodyEnd(h)
}

// NoMmap makes Open take the read path of systems without mmap.
var NoMmap = &noMmap
