package infer

import (
	"errors"
	"fmt"

	"github.com/krafla/krafla/asm"
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

// packedBytes is the size of every matrix in the kernels' layout, each
// rounded up to align bytes.
func packedBytes(ws []*qmat, align int) int {
	var total int
	for _, w := range ws {
		if w.packQ4K() {
			total += roundUp(asm.PackedQ4KSize(w.rows, w.cols), align)
			continue
		}
		if w.packQ6K() {
			total += roundUp(asm.PackedQ6KSize(w.rows, w.cols), align)
			continue
		}
		if w.packIQ4XS() {
			total += roundUp(asm.PackedIQ4XSSize(w.rows, w.cols), align)
			continue
		}
		if w.packQ5K() {
			total += roundUp(asm.PackedQ5KSize(w.rows, w.cols), align)
			continue
		}
		if !w.packed() {
			continue // multiplied in the file's layout
		}
		if w.packQ5() {
			total += roundUp(asm.PackedQ5Size(w.f16, w.rows, w.cols), align)
			continue
		}
		total += roundUp(asm.PackedSize(w.packQ4(), w.f16, w.rows, w.cols), align)
	}
	return total
}

// packInto repacks every matrix from the file's layout into buf (packedBytes
// of it), each matrix starting at a multiple of align.
func packInto(ws []*qmat, buf []byte, align int) {
	off := 0
	for _, w := range ws {
		if w.packQ4K() {
			n := asm.PackedQ4KSize(w.rows, w.cols)
			w.pk4, w.k4 = asm.PackQ4_K(buf[off:off+n:off+n], w.gb, w.rows, w.cols), true
			off += roundUp(n, align)
			continue
		}
		if w.packQ6K() {
			n := asm.PackedQ6KSize(w.rows, w.cols)
			w.pk6, w.k6 = asm.PackQ6_K(buf[off:off+n:off+n], w.gb, w.rows, w.cols), true
			off += roundUp(n, align)
			continue
		}
		if w.packIQ4XS() {
			n := asm.PackedIQ4XSSize(w.rows, w.cols)
			w.pkx, w.kx = asm.PackIQ4_XS(buf[off:off+n:off+n], w.gb, w.rows, w.cols), true
			off += roundUp(n, align)
			continue
		}
		if w.packQ5K() {
			n := asm.PackedQ5KSize(w.rows, w.cols)
			w.pk5, w.k5 = asm.PackQ5_K(buf[off:off+n:off+n], w.gb, w.rows, w.cols), true
			off += roundUp(n, align)
			continue
		}
		if !w.packed() {
			continue
		}
		if w.packQ5() {
			n := asm.PackedQ5Size(w.f16, w.rows, w.cols)
			w.pk = asm.PackQ5_0(buf[off:off+n:off+n], w.gb, w.rows, w.cols, w.f16)
			off += roundUp(n, align)
			continue
		}
		n := asm.PackedSize(w.packQ4(), w.f16, w.rows, w.cols)
		dst := buf[off : off+n : off+n]
		if w.packIQ4() {
			w.pk = asm.PackIQ4_NL(dst, w.gb, w.rows, w.cols, w.f16)
		} else if w.viaQ8 {
			q, d := w.asQ8()
			w.pk = asm.PackQ8_0(dst, q, d, w.rows, w.cols, w.f16)
		} else if w.isQ4() {
			w.pk = asm.PackQ4_0(dst, w.q4, w.d, w.rows, w.cols, w.f16)
		} else {
			w.pk = asm.PackQ8_0(dst, w.q8, w.d, w.rows, w.cols, w.f16)
		}
		off += roundUp(n, align)
	}
}

// ensurePacked repacks the weights into ordinary memory (4 KiB pages) unless
// CopyToHugePages did it first: the kernels read only the packed layout
// (rows interleaved in groups of 16 with their scales, asm.Packed), so the
// file mapping is not read after this.
func (m *Model) ensurePacked() {
	m.packOnce.Do(func() {
		ws := m.mats()
		buf := make([]byte, packedBytes(ws, 64))
		packInto(ws, buf, 64)
	})
}

// CopyToHugePages repacks the quantized weights (quants and scales) from the
// file mapping into the kernels' layout (asm.Packed) in anonymous memory
// backed by transparent huge pages (2 MiB pages on x86-64), and returns the
// bytes written. Generation streams every weight once per token; with 4 KiB
// pages each 4 KiB costs a TLB miss, which huge pages remove. The results do
// not change. Without this call the first forward pass repacks into ordinary
// memory instead (what --no-huge-pages does): either way the process holds a
// second copy of the weights (the file's pages stay in the page cache,
// reclaimable). It must be called before any session runs. The copy is
// released by Close. It fails where the system has no transparent huge
// pages; the model is then unchanged.
func (m *Model) CopyToHugePages() (int64, error) {
	if m.huge != nil {
		return 0, nil
	}
	ws := m.mats()
	const align = 64
	total := packedBytes(ws, align)
	if total == 0 {
		return 0, nil
	}
	buf, release, err := allocHuge(total)
	if err != nil {
		return 0, fmt.Errorf("infer: huge pages: %w", err)
	}
	packInto(ws, buf, align)
	m.packOnce.Do(func() {})
	m.huge = release
	return int64(total), nil
}

// allocHuge is hugeAlloc; tests set it to hugeAllocUnsupported to run the
// path of systems without transparent huge pages on Linux too.
var allocHuge = hugeAlloc

// hugeAllocUnsupported is hugeAlloc where there are no huge pages (every
// system but Linux: hugepages_other.go).
func hugeAllocUnsupported(int) ([]byte, func() error, error) {
	return nil, nil, errors.New("not supported on this system")
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }
