package infer

import (
	"fmt"
	"unsafe"
)

// mats returns every quantized matrix of the model, in the order the forward
// pass reads them (the shared classifier once).
func (m *Model) mats() []*qmat {
	ws := []*qmat{&m.tokEmb}
	for l := range m.layers {
		L := &m.layers[l]
		if m.cfg.isLinear(l) {
			ws = append(ws, &L.lqkv, &L.lz, &L.lb, &L.la, &L.lout)
		} else {
			ws = append(ws, &L.wq, &L.wk, &L.wv)
			if L.wg != nil {
				ws = append(ws, L.wg)
			}
			ws = append(ws, &L.wo)
		}
		ws = append(ws, &L.w1, &L.w3, &L.w2)
	}
	if m.wcls != &m.tokEmb {
		ws = append(ws, m.wcls)
	}
	return ws
}

// CopyToHugePages copies the quantized weights (quants and scales) out of the
// file mapping into anonymous memory backed by transparent huge pages (2 MiB
// pages on x86-64), and returns the bytes copied. Generation streams every
// weight once per token; with 4 KiB pages of the file mapping each 4 KiB costs
// a TLB miss, which huge pages remove. The results do not change (the same
// bytes are read), but the process then holds a second copy of the weights
// (the file's pages stay in the page cache, reclaimable) and loading takes the
// copy's time. The copy is released by Close. It fails where the system has no
// transparent huge pages; the model is then unchanged.
func (m *Model) CopyToHugePages() (int64, error) {
	if m.huge != nil {
		return 0, nil
	}
	ws := m.mats()
	const align = 64
	var total int
	for _, w := range ws {
		total += roundUp(len(w.q8)+len(w.q4), align) + roundUp(4*len(w.d), align)
	}
	if total == 0 {
		return 0, nil
	}
	buf, release, err := hugeAlloc(total)
	if err != nil {
		return 0, fmt.Errorf("infer: huge pages: %w", err)
	}
	off := 0
	take := func(n int) []byte {
		b := buf[off : off+n : off+n]
		off += roundUp(n, align)
		return b
	}
	for _, w := range ws {
		if w.q8 != nil {
			b := take(len(w.q8))
			copy(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w.q8))), len(w.q8)))
			w.q8 = unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
		} else {
			b := take(len(w.q4))
			copy(b, w.q4)
			w.q4 = b
		}
		if len(w.d) > 0 {
			b := take(4 * len(w.d))
			copy(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w.d))), 4*len(w.d)))
			w.d = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(w.d))
		}
	}
	m.huge = release
	return int64(total), nil
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
