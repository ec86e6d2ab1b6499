package infer

import (
	"math"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/quantize"
)

// minGroups is the smallest number of groups of asm.GroupRows output rows
// worth handing to a thread.
const minGroups = 2

// quantRows is the fewest activation rows quant hands to a thread: a
// prompt's rows are quantized in parallel, a generated token's one row is
// not worth a dispatch.
const quantRows = 8

// quant quantizes n rows of width cols from x into s.qa/s.da with SPEC.md's
// rule, the activation side of the next quantized products; each row on
// its own, so the threads splitting the rows change no bit.
func (s *Session) quant(x []float32, n, cols int) {
	nb := cols / 32
	k := s.qk != nil && cols%asm.QK == 0
	s.pool.run(n, quantRows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			asm.QuantizeQ8_0(x[i*cols:(i+1)*cols], s.qa[i*cols:(i+1)*cols], s.da[i*nb:(i+1)*nb])
			if k {
				// Q8_K too, for the K-quant and IQ4_XS matrices (llama.cpp's
				// activation type for them); the same rows and strides.
				asm.QuantizeQ8_K(x[i*cols:(i+1)*cols], s.qk[i*cols:(i+1)*cols], s.dk[i*cols/asm.QK:(i+1)*cols/asm.QK], s.bk[i*cols/16:(i+1)*cols/16])
			}
		}
	})
}

// dotsChunkRows is the number of activation rows mulBlocked multiplies with
// each K-quant weight row at a time (a variable for the tests): 16 rows'
// superblocks stay in L1 as the weight rows go by. Measured on the AVX-512
// kernels (AMD EPYC, 2048 × 2048 Q4_K and Q6_K, thread CPU time): 8 or 16
// rows 53–58 G multiply-adds/s, 32 rows 22, 64 rows 19–24; 8192 wide: 16
// rows 44, 8 rows 36.
var dotsChunkRows = 16

// mulBlocked computes rows r0..r1 of a blocked matrix's products with the n
// activation rows quantized last, out[i·w.rows + r] as MatMul lays them out:
// each output the pure-Go definition (asm/dot_ggml.go) of its row and
// activation row, so threads and batching change no bit. The Q8_K types go
// through asm's DotsRows… (one call for the rows r0..r1, each row's
// superblocks unpacked once for the activation rows, the same bits as the
// single products).
func (s *Session) mulBlocked(out []float32, w *qmat, r0, r1, n int) {
	cols := w.cols
	var dots func([]float32, int, []byte, int, []int8, []float32, []int16, int)
	switch w.gt {
	case quantize.GGMLQ4_K:
		dots = asm.DotsRowsQ4_K
	case quantize.GGMLQ5_K:
		dots = asm.DotsRowsQ5_K
	case quantize.GGMLQ6_K:
		dots = asm.DotsRowsQ6_K
	case quantize.GGMLIQ4_XS:
		dots = asm.DotsRowsIQ4_XS
	}
	if w.k4 {
		// The packed interleaved layouts: all n rows in one call, which
		// tiles them; the same bits as DotsRowsQ4_K (DotsRowsQ6_K).
		w.pk4.MatMul(out[r0:], w.rows, r0, r1, s.qk[:n*cols], s.dk[:n*cols/asm.QK], s.bk[:n*cols/16], n)
		return
	}
	if w.k6 {
		w.pk6.MatMul(out[r0:], w.rows, r0, r1, s.qk[:n*cols], s.dk[:n*cols/asm.QK], s.bk[:n*cols/16], n)
		return
	}
	if w.kx {
		w.pkx.MatMul(out[r0:], w.rows, r0, r1, s.qk[:n*cols], s.dk[:n*cols/asm.QK], s.bk[:n*cols/16], n)
		return
	}
	if w.k5 {
		w.pk5.MatMul(out[r0:], w.rows, r0, r1, s.qk[:n*cols], s.dk[:n*cols/asm.QK], s.bk[:n*cols/16], n)
		return
	}
	if dots != nil {
		// gRow's size, once: the type's block sizes are map lookups, which
		// took a tenth of a generated token when made per row.
		rb := cols / w.gt.BlockElems() * w.gt.BlockBytes()
		// Activation rows in chunks of dotsChunkRows; each output is still
		// one Dots product.
		step := dotsChunkRows
		nb := cols / asm.QK
		for i0 := 0; i0 < n; i0 += step {
			m := min(step, n-i0)
			a, da, bs := s.qk[i0*cols:(i0+m)*cols], s.dk[i0*nb:(i0+m)*nb], s.bk[i0*nb*16:(i0+m)*nb*16]
			dots(out[i0*w.rows+r0:], w.rows, w.gb[r0*rb:r1*rb:r1*rb], r1-r0, a, da, bs, m)
		}
		return
	}
	for r := r0; r < r1; r++ {
		row := w.gRow(r)
		for i := range n {
			a := s.qa[i*cols : (i+1)*cols]
			da := s.da[i*cols/32 : (i+1)*cols/32]
			var v float32
			switch w.gt {
			case quantize.GGMLQ4_1:
				v = asm.DotQ4_1(row, a, da)
			case quantize.GGMLQ5_0:
				v = asm.DotQ5_0(row, a, da)
			case quantize.GGMLIQ4_NL:
				v = asm.DotIQ4_NL(row, a, da)
			}
			out[i*w.rows+r] = v
		}
	}
}

// mul computes out[i·w.rows + r] = w row r · activation row i for the n rows
// quantized last by quant, threads splitting the output rows by groups of
// the packed layout.
func (s *Session) mul(out []float32, w *qmat, n int) { s.muls(n, mulJob{out, w}) }

// mulJob is one product of a muls dispatch.
type mulJob struct {
	out []float32
	w   *qmat
}

// muls runs the products of several matrices with the same input (the n
// rows quantized last) as one dispatch of the pool, threads splitting the
// groups of all of them: one synchronization instead of one per matrix,
// which matters when a token's products take microseconds. Each output is
// mul's.
func (s *Session) muls(n int, jobs ...mulJob) {
	s.m.ensurePacked()
	const g = asm.GroupRows
	total := 0
	for _, j := range jobs {
		total += (j.w.rows + g - 1) / g
	}
	s.pool.run(total, minGroups, func(_, lo, hi int) {
		base := 0 // first group of job j in the joint numbering
		for _, j := range jobs {
			w := j.w
			ng := (w.rows + g - 1) / g
			if a, b := max(lo, base), min(hi, base+ng); a < b {
				cols := w.cols
				r0, r1 := (a-base)*g, min((b-base)*g, w.rows)
				if !w.packed() {
					s.mulBlocked(j.out, w, r0, r1, n)
					base += ng
					continue
				}
				w.pk.MatMul(j.out[r0:], w.rows, r0, r1, s.qa[:n*cols], s.da[:n*cols/32], n)
			}
			base += ng
		}
	})
}

// maxLogitBytes bounds the logits computed in one classifier pass, so that a
// large vocabulary with logits for every token does not allocate batch × vocab.
var maxLogitBytes = 64 << 20

// forward runs one batch of tokens through every layer, then the classifier
// for tokens first..n−1, calling emit(i, logits) for each in order.
func (s *Session) forward(tokens []int, first int, emit func(i int, logits []float32) error) error {
	n := len(tokens)
	s.seqs = append(s.seqs[:0], seq{layers: s.layers, pos0: s.pos, n: n})
	s.layerPass(tokens, s.seqs)
	s.pos += n
	s.rows = s.rows[:0]
	for i := first; i < n; i++ {
		s.rows = append(s.rows, i)
	}
	var fn func(j int, logits []float32) error
	if emit != nil {
		fn = func(j int, logits []float32) error { return emit(first+j, logits) }
	}
	return s.classify(s.rows, fn)
}

// seq is one sequence's part of a forward pass: scratch rows off … off+n−1
// hold its tokens at positions pos0 … pos0+n−1, which attend to (and extend)
// the caches in layers. A Session's own pass has one seq; a Batch's has one
// per session.
type seq struct {
	layers       []layerState
	pos0, off, n int
}

// layerPass runs the tokens of seqs (in order, len(tokens) rows in all)
// through every layer, leaving the last residual in s.x. Row by row the
// operations are those of a pass of the row's sequence alone.
func (s *Session) layerPass(tokens []int, seqs []seq) {
	m := s.m
	c := &m.cfg
	n := len(tokens)
	dim := c.Dim

	// Embedding rows, dequantized and scaled.
	for i, t := range tokens {
		m.embed(s.x[i*dim:(i+1)*dim], &m.tokEmb, t, c.EmbedScale)
	}
	// RoPE tables of the rows' positions, and each row's sequence.
	half := c.RotDim / 2
	s.rowSeq = s.rowSeq[:0]
	for q, sq := range seqs {
		for range sq.n {
			s.rowSeq = append(s.rowSeq, q)
		}
		for k, r := range m.ropes {
			if r == nil {
				continue
			}
			for i := sq.off; i < sq.off+sq.n; i++ {
				r.table(sq.pos0+i-sq.off, s.cos[k][i*half:(i+1)*half], s.sin[k][i*half:(i+1)*half])
			}
		}
	}
	if s.imat != nil {
		s.imat.layerTokens += uint64(n)
	}

	for l := range m.layers {
		L := &m.layers[l]
		for i := range n {
			rmsNorm(s.xn[i*dim:(i+1)*dim], s.x[i*dim:(i+1)*dim], L.attnNorm, c.NormEps)
		}
		s.imat.add(l, slotAttnIn, s.xn, n, dim)
		s.quant(s.xn, n, dim)
		if c.isLinear(l) {
			s.linear(l, n, seqs)
		} else {
			s.attention(l, n, seqs)
		}
		if L.postAttnNorm != nil {
			for i := range n {
				rmsNorm(s.t[i*dim:(i+1)*dim], s.t[i*dim:(i+1)*dim], L.postAttnNorm, c.NormEps)
			}
		}
		add(s.x[:n*dim], s.t) // add reads len(y) of x

		// FFN.
		for i := range n {
			rmsNorm(s.xn[i*dim:(i+1)*dim], s.x[i*dim:(i+1)*dim], L.ffnNorm, c.NormEps)
		}
		s.imat.add(l, slotFFNIn, s.xn, n, dim)
		s.quant(s.xn, n, dim)
		hd := c.HiddenDim
		s.muls(n, mulJob{s.h1, &L.w1}, mulJob{s.h3, &L.w3})
		swiGLU(s.h1[:n*hd], s.h3, c.Act) // swiGLU reads len(g) of u
		s.imat.add(l, slotFFNOut, s.h1, n, hd)
		s.quant(s.h1, n, hd)
		s.mul(s.t, &L.w2, n)
		if L.postFFNNorm != nil {
			for i := range n {
				rmsNorm(s.t[i*dim:(i+1)*dim], s.t[i*dim:(i+1)*dim], L.postFFNNorm, c.NormEps)
			}
		}
		add(s.x[:n*dim], s.t) // add reads len(y) of x
	}
}

// classify runs the classifier on the given rows of s.x, at most
// maxLogitBytes at a time, calling emit(j, logits) for rows[j] in order.
// Each row's logits are the same whichever pass computes them.
func (s *Session) classify(rows []int, emit func(j int, logits []float32) error) error {
	m := s.m
	c := &m.cfg
	dim := c.Dim
	step := max(1, min(len(rows), maxLogitBytes/(4*c.Vocab)))
	for r0 := 0; r0 < len(rows); r0 += step {
		r1 := min(r0+step, len(rows))
		nl := r1 - r0
		for j, i := range rows[r0:r1] {
			rmsNorm(s.xn[j*dim:(j+1)*dim], s.x[i*dim:(i+1)*dim], m.finalNorm, c.NormEps)
		}
		if s.imat != nil {
			s.imat.addClassifier(s.xn, nl, dim)
		}
		s.quant(s.xn, nl, dim)
		if len(s.logits) < nl*c.Vocab {
			s.logits = make([]float32, nl*c.Vocab)
		}
		out := s.logits[:nl*c.Vocab]
		s.mul(out, m.wcls, nl)
		if cap := c.FinalSoftcap; cap > 0 {
			for i, v := range out {
				out[i] = softcap(v, cap)
			}
		}
		if emit == nil {
			continue
		}
		for j := r0; j < r1; j++ {
			if err := emit(j, out[(j-r0)*c.Vocab:(j-r0+1)*c.Vocab]); err != nil {
				return err
			}
		}
	}
	return nil
}

// embed writes row t of the embedding, dequantized (float32(q)·d) and times scale.
func (m *Model) embed(x []float32, w *qmat, t int, scale float32) {
	m.ensurePacked()
	cols := w.cols
	if w.blocked() {
		// The file's validated blocks: whole rows, so no error.
		quantize.DequantizeGGML(w.gt, w.gRow(t), x[:cols])
	} else {
		w.pk.Dequant(t, x[:cols])
	}
	if scale != 1 {
		for i := range x[:cols] {
			x[i] *= scale
		}
	}
}

// attention runs one attention layer over the n rows of seqs, with the
// normalized input quantized in s.qa, leaving the output projection in s.t.
func (s *Session) attention(l, n int, seqs []seq) {
	m := s.m
	c := &m.cfg
	L := &m.layers[l]
	hd, qd, kvd := c.HeadDim, c.QDim, c.KVDim
	if L.wg != nil {
		s.muls(n, mulJob{s.q, &L.wq}, mulJob{s.k, &L.wk}, mulJob{s.v, &L.wv}, mulJob{s.g, L.wg})
	} else {
		s.muls(n, mulJob{s.q, &L.wq}, mulJob{s.k, &L.wk}, mulJob{s.v, &L.wv})
	}
	flags := c.LayerFlags[l]
	kind := -1 // RoPE table: 0 global, 1 local, -1 none
	if flags&flagNoRoPE == 0 {
		kind = 0
		if flags&flagLocalRoPE != 0 {
			kind = 1
		}
	}
	half := c.RotDim / 2
	// normRope applies the head norm (when the layer has one), then RoPE at
	// batch row i, to each of the nh heads of x.
	normRope := func(x []float32, nh int, norm []float32, i int) {
		for h := range nh {
			xh := x[h*hd : (h+1)*hd]
			if norm != nil {
				rmsNorm(xh, xh, norm, c.NormEps)
			}
			if kind >= 0 {
				applyRope(xh, s.cos[kind][i*half:(i+1)*half], s.sin[kind][i*half:(i+1)*half])
			}
		}
	}
	for i := range n {
		q := s.q[i*qd : (i+1)*qd]
		k := s.k[i*kvd : (i+1)*kvd]
		if L.bq != nil {
			add(q, L.bq)
			add(k, L.bk)
			add(s.v[i*kvd:(i+1)*kvd], L.bv)
		}
		normRope(q, c.NHeads, L.qNorm, i)
		normRope(k, c.NKVHeads, L.kNorm, i)
	}

	// A sequence cached in f16 attends to its own keys and values rounded
	// to f16 too, as a later pass will read them from the cache.
	for _, sq := range seqs {
		if sq.layers[l].f16() {
			asm.RoundF16(s.k[sq.off*kvd : (sq.off+sq.n)*kvd])
			asm.RoundF16(s.v[sq.off*kvd : (sq.off+sq.n)*kvd])
		}
	}
	// The pass's keys in the cache's block layout, batch row i as slot i.
	transposeKeys(s.kt, s.k, n, kvd)

	// Scores over positions lo..p for query position p = pos0+i (i the row
	// within its sequence): keys before pos0 come from the sequence's cache,
	// the pass's own keys from its rows of s.k, s.v; the order is increasing
	// position either way, so batching does not change the bits.
	window := 0
	if c.isSliding(l) {
		window = c.SlidingWindow
	}
	group := c.NHeads / c.NKVHeads
	scale := c.AttnScale
	capv := c.AttnSoftcap
	// Queries go in tiles: up to attnTileRows rows of one sequence times the
	// heads that share a KV head (or one head, when that leaves too few
	// tiles for several threads), and keys and values in blocks of attnKeyBlock
	// positions, so that a block is read from memory once per tile and reused
	// from L1 by the tile's queries. Tiling changes no bit: each score is its
	// own dot product, and each output adds its values in increasing position
	// (the blocks come in order), as the untiled loop did.
	hpt := group // heads per tile
	if tiles := c.NKVHeads * ((n + attnTileRows - 1) / attnTileRows); s.pool.threads > 1 && tiles < 4*s.pool.threads {
		hpt = 1
	}
	s.tiles = s.tiles[:0]
	for q, sq := range seqs {
		for r0 := 0; r0 < sq.n; r0 += attnTileRows {
			for h0 := 0; h0 < c.NHeads; h0 += hpt {
				s.tiles = append(s.tiles, attnTile{seq: q, r0: r0, r1: min(r0+attnTileRows, sq.n), h0: h0, h1: h0 + hpt})
			}
		}
	}
	tiles := s.tiles
	s.pool.run(len(tiles), 1, func(part, lo, hi int) {
		for _, tl := range tiles[lo:hi] {
			sq := &seqs[tl.seq]
			ls := &sq.layers[l]
			pos0 := sq.pos0
			kvo := (tl.h0 / group) * hd
			from := func(p int) int {
				if window > 0 {
					return max(0, p-window+1)
				}
				return 0
			}
			first, last := from(pos0+tl.r0), pos0+tl.r1-1
			span := last - first + 1 // no query of the tile attends to more
			nq := (tl.r1 - tl.r0) * (tl.h1 - tl.h0)
			if len(s.scores[part]) < nq*span {
				s.scores[part] = make([]float32, nq*span)
			}
			sc := s.scores[part]
			// query j of the tile: row r0 + j/heads, head h0 + j%heads.
			query := func(j int) (row, h, p int, w []float32) {
				nh := tl.h1 - tl.h0
				i, h := tl.r0+j/nh, tl.h0+j%nh
				p = pos0 + i
				return sq.off + i, h, p, sc[j*span : j*span+p-from(p)+1]
			}
			// The scores of all the tile's queries against one run of keys
			// at once (asm.DotF32T: each key load serves several queries):
			// qs holds the queries one after the other, bs the scores of the
			// run's key blocks, of which each query keeps those it attends to.
			const ldo = attnKeyBlock + 2*kvBlock
			if len(s.attnBuf[part]) < nq*(hd+ldo) {
				s.attnBuf[part] = make([]float32, nq*(hd+ldo))
			}
			qs, bs := s.attnBuf[part][:nq*hd], s.attnBuf[part][nq*hd:]
			for j := range nq {
				row, h, _, _ := query(j)
				copy(qs[j*hd:(j+1)*hd], s.q[row*qd+h*hd:])
			}
			// run scores positions pa … pa+cnt−1, slots slot … slot+cnt−1 of
			// the key block layout k (or k16).
			run := func(pa, slot, cnt int, k []float32, k16 []uint16) {
				o := blockScores(bs, ldo, qs, hd, k, k16, slot, cnt, kvo, kvd)
				for j := range nq {
					_, _, p, w := query(j)
					f0 := from(p)
					if a, b := max(pa, f0), min(pa+cnt, p+1); a < b {
						copy(w[a-f0:b-f0], bs[j*ldo+o+a-pa:])
					}
				}
			}
			for kb := first; kb <= last; kb += attnKeyBlock {
				ke := min(kb+attnKeyBlock, last+1)
				if nc := min(ke, pos0) - kb; nc > 0 {
					// Keys before pos0 from the cache (slot: position mod slots).
					ringSegments(kb%ls.slots, ls.slots, nc, func(j, slot, cnt int) {
						run(kb+j, slot, cnt, ls.k, ls.k16)
					})
				}
				if a := max(kb, pos0); a < ke {
					// The pass's own keys, batch rows of s.kt.
					run(a, sq.off+a-pos0, ke-a, s.kt, nil)
				}
			}
			for j := range nq {
				row, h, _, w := query(j)
				if capv > 0 {
					for x, v := range w {
						w[x] = softcap(v*scale, capv)
					}
				} else {
					asm.ScaleF32(w, scale)
				}
				softmax(w)
				// out = Σ_j w[j]·v_j in increasing j, each product rounded
				// before it is added, from +0 (asm.AxpyF32Strided's order).
				clear(s.o[row*qd+h*hd : row*qd+(h+1)*hd])
			}
			// The heads of a row attend to the same positions: their
			// weighted sums go together (asm.AxpyF32StridedN: each value
			// load serves the nh heads), outputs hd apart, weights span apart.
			nh := tl.h1 - tl.h0
			for kb := first; kb <= last; kb += attnKeyBlock {
				ke := min(kb+attnKeyBlock, last+1)
				for j := 0; j < nq; j += nh {
					row, h, p, _ := query(j)
					f0 := from(p)
					a, b := max(kb, f0), min(ke, p+1)
					if a >= b {
						continue
					}
					out, w := s.o[row*qd+h*hd:], sc[j*span+a-f0:]
					if nc := max(0, min(b, pos0)-a); nc > 0 {
						ringSegments(a%ls.slots, ls.slots, nc, func(i, slot, cnt int) {
							ls.weigh(out, hd, nh, w[i:], span, cnt, slot, kvo, kvd)
						})
					}
					if a2 := max(a, pos0); a2 < b {
						asm.AxpyF32StridedN(out, hd, hd, nh, w[a2-a:], span, b-a2, s.v[(sq.off+a2-pos0)*kvd+kvo:], kvd)
					}
				}
			}
		}
	})
	// Store each sequence's keys and values (only the last `slots` matter for
	// a ring).
	for _, sq := range seqs {
		ls := &sq.layers[l]
		for i := max(0, sq.n-ls.slots); i < sq.n; i++ {
			slot, r := (sq.pos0+i)%ls.slots, sq.off+i
			ls.store(slot, kvd, s.k[r*kvd:(r+1)*kvd], s.v[r*kvd:(r+1)*kvd])
		}
	}
	if L.wg != nil {
		o, g := s.o[:n*qd], s.g[:n*qd]
		for i := range o {
			o[i] *= sigmoid(g[i])
		}
	}
	s.imat.add(l, slotAttnOut, s.o, n, qd)
	s.quant(s.o, n, qd)
	s.mul(s.t, &L.wo, n)
}

// Attention tiles: query rows per tile and key positions per block.
const (
	attnTileRows = 4
	attnKeyBlock = 64
)

// attnTile is rows r0 … r1−1 of sequence seq, heads h0 … h1−1.
type attnTile struct{ seq, r0, r1, h0, h1 int }

// ringSegments calls f(j, slot, cnt) for the contiguous runs of n entries of a
// ring of slots slots starting at slot: entries j..j+cnt−1 are slots
// slot..slot+cnt−1 (at most two runs: up to the end of the ring, then from 0).
func ringSegments(slot, slots, n int, f func(j, slot, cnt int)) {
	for j := 0; j < n; {
		cnt := min(n-j, slots-slot)
		f(j, slot, cnt)
		j += cnt
		slot = 0
	}
}

// linear runs one gated-delta-rule layer over the n rows of seqs (SPEC.md
// "Linear attention", ARCHITECTURES.md §7), with the normalized input
// quantized in s.qa, leaving the output projection in s.t.
func (s *Session) linear(l, n int, seqs []seq) {
	m := s.m
	c := &m.cfg
	L := &m.layers[l]
	C, V, K, dk, dv, kc := c.LinQKV(), c.LinV, c.LinK, c.LinDK, c.LinDV, c.LinConv
	vd := V * dv
	s.muls(n, mulJob{s.u, &L.lqkv}, mulJob{s.z, &L.lz}, mulJob{s.lb, &L.lb}, mulJob{s.la, &L.la})

	// Causal depthwise convolution, then SiLU, channel by channel; the state
	// holds the last kc−1 pre-convolution inputs of each sequence. Sum order:
	// taps 0..kc−1, the last tap multiplying the current input.
	s.pool.run(C, 64, func(_, lo, hi int) {
		hist := make([]float32, kc)
		for ch := lo; ch < hi; ch++ {
			w := L.lconv[ch*kc : (ch+1)*kc]
			for _, sq := range seqs {
				ls := &sq.layers[l]
				for j := range kc - 1 {
					hist[j] = ls.conv[j*C+ch]
				}
				for i := sq.off; i < sq.off+sq.n; i++ {
					hist[kc-1] = s.u[i*C+ch]
					var acc float32
					for j, wj := range w {
						acc = acc + float32(wj*hist[j])
					}
					copy(hist, hist[1:])
					s.u[i*C+ch] = silu(acc)
				}
				for j := range kc - 1 {
					ls.conv[j*C+ch] = hist[j]
				}
			}
		}
	})

	// Per sequence and value head: normalize q and k, then the recurrence
	// over the sequence's rows.
	invSqrtDk := float32(1 / math.Sqrt(float64(dk)))
	s.pool.run(len(seqs)*V, 1, func(_, lo, hi int) {
		qk := make([]float32, 2*dk)
		mem := make([]float32, dv)
		for item := lo; item < hi; item++ {
			sq, h := &seqs[item/V], item%V
			kh := h / (V / K)
			S := sq.layers[l].s[h*dk*dv : (h+1)*dk*dv]
			for i := sq.off; i < sq.off+sq.n; i++ {
				u := s.u[i*C : (i+1)*C]
				q, k := qk[:dk], qk[dk:]
				copy(q, u[kh*dk:(kh+1)*dk])
				copy(k, u[K*dk+kh*dk:K*dk+(kh+1)*dk])
				v := u[2*K*dk+h*dv : 2*K*dk+(h+1)*dv]
				l2norm(q)
				for j := range q {
					q[j] *= invSqrtDk
				}
				l2norm(k)
				beta := sigmoid(s.lb[i*V+h])
				g := -expF32(L.aLog[h]) * softplus(s.la[i*V+h]+L.dtBias[h])
				eg := expF32(g)
				for j := range S {
					S[j] *= eg
				}
				// mem = Sᵀk, rows of S in increasing order.
				clear(mem)
				for r := range dk {
					axpy(mem, k[r], S[r*dv:(r+1)*dv])
				}
				for j := range mem {
					mem[j] = beta * (v[j] - mem[j])
				}
				// S += k ⊗ delta
				for r := range dk {
					axpy(S[r*dv:(r+1)*dv], k[r], mem)
				}
				// o = Sᵀq
				o := s.o[i*vd+h*dv : i*vd+(h+1)*dv]
				clear(o)
				for r := range dk {
					axpy(o, q[r], S[r*dv:(r+1)*dv])
				}
				rmsNorm(o, o, L.lnorm, c.NormEps)
				z := s.z[i*vd+h*dv : i*vd+(h+1)*dv]
				for j := range o {
					o[j] *= silu(z[j])
				}
			}
		}
	})
	if vd == c.QDim {
		s.imat.add(l, slotAttnOut, s.o, n, vd)
	}
	s.quant(s.o, n, vd)
	s.mul(s.t, &L.lout, n)
}

// l2norm divides x by sqrt(Σx² + 1e-6) (the epsilon inside the root, as the
// Hugging Face gated delta rule does).
func l2norm(x []float32) {
	ss := dotF32(x, x)
	r := float32(1 / math.Sqrt(float64(ss+1e-6)))
	for i := range x {
		x[i] *= r
	}
}
