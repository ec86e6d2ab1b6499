package infer

import (
	"math"
	"strconv"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// This file holds a plain float64 forward pass written from SPEC.md and
// ARCHITECTURES.md §5 and §7, from the dequantized weights, position by
// position over the whole history. It shares no code with the fast path. With
// qact set, it also rounds every matrix input to Q8_0 the way SPEC.md says (in
// float64), which isolates the float32 rounding of the fast path.

type refModel struct {
	h    mlb.Header
	f    *mlb.File
	qact bool
	w    map[string][]float64
	k    map[string]bool // matrices multiplying Q8_K activations (K-quants, IQ4_XS)
	// sq sums the squares of every matrix input by matrix name, and n counts
	// the products, for the importance-matrix test.
	sq map[string][]float64
	n  map[string]int
	// hidden, when not nil, collects each position's final-norm state.
	hidden *[][]float64
}

func newRef(f *mlb.File, qact bool) *refModel {
	r := &refModel{h: f.Header, f: f, qact: qact, w: map[string][]float64{}, k: map[string]bool{}, sq: map[string][]float64{}, n: map[string]int{}}
	for i := range f.Tensors {
		tt := &f.Tensors[i]
		var v []float64
		switch tt.Type {
		case mlb.F32:
			for _, x := range tt.F32 {
				v = append(v, float64(x))
			}
		case mlb.Q8_0, mlb.Q4_0:
			typ := quantize.TypeQ8_0
			if tt.Type == mlb.Q4_0 {
				typ = quantize.TypeQ4_0
			}
			for _, x := range quantize.Dequantize(typ, tt.Q, tt.D, tt.Rows, tt.Cols) {
				v = append(v, float64(x))
			}
		case mlb.Q4_1, mlb.Q5_0, mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_NL, mlb.IQ4_XS:
			y := make([]float32, tt.Rows*tt.Cols)
			if err := quantize.DequantizeGGML(quantize.GGMLType(mlb.TypeCode(tt.Type)), tt.Q, y); err != nil {
				panic(err)
			}
			for _, x := range y {
				v = append(v, float64(x))
			}
			r.k[tt.Name] = tt.Type.BlockElems() == 256
		default:
			continue
		}
		r.w[tt.Name] = v
	}
	return r
}

func (r *refModel) get(name string) []float64 {
	v, ok := r.w[name]
	if !ok {
		panic("ref: missing " + name)
	}
	return v
}

// qround rounds x to Q8_0 per block of 32 (SPEC.md's rule, in float64).
func qround(x []float64) []float64 {
	out := make([]float64, len(x))
	for b := 0; b < len(x); b += 32 {
		amax := 0.0
		for _, v := range x[b : b+32] {
			amax = math.Max(amax, math.Abs(v))
		}
		if amax < 1e-30 {
			continue
		}
		d := amax / 127
		for i, v := range x[b : b+32] {
			q := math.Trunc(v*127/amax + math.Copysign(0.5, v))
			q = math.Max(-127, math.Min(127, q))
			out[b+i] = q * d
		}
	}
	return out
}

// qroundK rounds x to Q8_K per block of 256 (ggml's quantize_row_q8_K_ref,
// in float64): max the value of largest magnitude, q = round-half-even
// (−127·x/max) capped at 127, value q·(−max/127).
func qroundK(x []float64) []float64 {
	out := make([]float64, len(x))
	for b := 0; b < len(x); b += 256 {
		mx, amax := 0.0, 0.0
		for _, v := range x[b : b+256] {
			if math.Abs(v) > amax {
				amax, mx = math.Abs(v), v
			}
		}
		if amax == 0 {
			continue
		}
		for i, v := range x[b : b+256] {
			q := math.Min(127, math.RoundToEven(-127*v/mx))
			out[b+i] = q * (-mx / 127)
		}
	}
	return out
}

// matvec returns W·x for the named rows×cols matrix.
func (r *refModel) matvec(name string, x []float64) []float64 {
	w := r.get(name)
	cols := len(x)
	if r.sq[name] == nil {
		r.sq[name] = make([]float64, cols)
	}
	for i, v := range x {
		r.sq[name][i] += v * v
	}
	r.n[name]++
	if r.qact && r.k[name] {
		x = qroundK(x)
	} else if r.qact {
		x = qround(x)
	}
	out := make([]float64, len(w)/cols)
	for i := range out {
		s := 0.0
		for j, v := range x {
			s += w[i*cols+j] * v
		}
		out[i] = s
	}
	return out
}

func rmsnorm64(x, g []float64, eps float64) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * s
		if g != nil {
			out[i] *= g[i]
		}
	}
	return out
}

func silu64(x float64) float64    { return x / (1 + math.Exp(-x)) }
func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// invFreq returns the inverse frequencies of a layer, SPEC.md "RoPE" with
// rot_dim as the exponent's denominator (SPEC-NOTES.md).
func (r *refModel) invFreq(local bool) []float64 {
	h := r.h
	rot := h.RotDimEff()
	theta := float64(h.RopeTheta)
	typ := h.RopeType
	if local {
		theta, typ = float64(h.RopeLocalTheta), 0
	}
	f := float64(h.RopeFactor)
	inv := make([]float64, rot/2)
	for i := range inv {
		base := math.Pow(theta, -float64(2*i)/float64(rot))
		switch typ {
		case 1:
			orig, lo, hi := float64(h.RopeOrigMaxSeq), float64(h.RopeLowFreqFactor), float64(h.RopeHighFreqFactor)
			wl := 2 * math.Pi / base
			if wl < orig/hi {
				inv[i] = base
			} else if wl > orig/lo {
				inv[i] = base / f
			} else {
				s := (orig/wl - lo) / (hi - lo)
				inv[i] = (1-s)*base/f + s*base
			}
		case 2:
			inv[i] = base / f
		case 3:
			orig := float64(h.RopeOrigMaxSeq)
			d := func(rr float64) float64 {
				return float64(rot) * math.Log(orig/(2*math.Pi*rr)) / (2 * math.Log(theta))
			}
			lo := math.Max(math.Floor(d(float64(h.RopeLowFreqFactor))), 0)
			hi := math.Min(math.Ceil(d(float64(h.RopeHighFreqFactor))), float64(rot)-1)
			if lo == hi {
				hi += 0.001
			}
			ramp := math.Min(math.Max((float64(i)-lo)/(hi-lo), 0), 1)
			inv[i] = base/f*ramp + base*(1-ramp)
		default:
			inv[i] = base
		}
	}
	return inv
}

func (r *refModel) rope(v []float64, pos int, local bool) {
	factor := 1.0
	if r.h.RopeType == 3 && !local {
		factor = float64(r.h.RopeAttnFactor)
	}
	for i, f := range r.invFreq(local) {
		c, s := math.Cos(float64(pos)*f)*factor, math.Sin(float64(pos)*f)*factor
		x0, x1 := v[2*i], v[2*i+1]
		v[2*i] = x0*c - x1*s
		v[2*i+1] = x0*s + x1*c
	}
}

// logits returns the logits of every position of tokens.
func (r *refModel) logits(tokens []int) [][]float64 {
	h := r.h
	dim := int(h.Dim)
	hd := h.HeadDimEff()
	nh, nkv := int(h.NHeads), int(h.NKVHeads)
	eps := float64(h.NormEps)
	nl := int(h.NLayers)
	keys := make([][][]float64, nl)
	vals := make([][][]float64, nl)
	convHist := make([][][]float64, nl) // pre-convolution inputs per position
	states := make([][][]float64, nl)   // per value head: dk×dv
	var out [][]float64
	emb := r.get("tok_emb")
	for p, tok := range tokens {
		x := make([]float64, dim)
		es := float64(h.EmbedScale)
		if es == 0 {
			es = 1
		}
		for i := range x {
			x[i] = emb[tok*dim+i] * es
		}
		for l := 0; l < nl; l++ {
			pre := "blk." + strconv.Itoa(l) + "."
			flags := h.LayerFlag(l)
			n := rmsnorm64(x, r.get(pre+"attn_norm"), eps)
			var att []float64
			if flags&mlb.FlagLinear != 0 {
				att = r.linear(l, pre, n, convHist, states)
			} else {
				q := r.matvec(pre+"wq", n)
				k := r.matvec(pre+"wk", n)
				v := r.matvec(pre+"wv", n)
				if h.QKVBias != 0 {
					for i, b := range r.get(pre + "bq") {
						q[i] += b
					}
					for i, b := range r.get(pre + "bk") {
						k[i] += b
					}
					for i, b := range r.get(pre + "bv") {
						v[i] += b
					}
				}
				for hh := 0; hh < nh; hh++ {
					qh := q[hh*hd : (hh+1)*hd]
					if h.QKNorm != 0 {
						copy(qh, rmsnorm64(qh, r.get(pre+"q_norm"), eps))
					}
					if flags&mlb.FlagNoRoPE == 0 {
						r.rope(qh, p, flags&mlb.FlagLocalRoPE != 0)
					}
				}
				for hh := 0; hh < nkv; hh++ {
					kh := k[hh*hd : (hh+1)*hd]
					if h.QKNorm != 0 {
						copy(kh, rmsnorm64(kh, r.get(pre+"k_norm"), eps))
					}
					if flags&mlb.FlagNoRoPE == 0 {
						r.rope(kh, p, flags&mlb.FlagLocalRoPE != 0)
					}
				}
				keys[l] = append(keys[l], k)
				vals[l] = append(vals[l], v)
				scale := float64(h.AttnScale)
				if scale == 0 {
					scale = 1 / math.Sqrt(float64(hd))
				}
				from := 0
				if flags&mlb.FlagSliding != 0 && h.SlidingWindow > 0 {
					from = max(0, p-int(h.SlidingWindow)+1)
				}
				o := make([]float64, nh*hd)
				for hh := 0; hh < nh; hh++ {
					kvh := hh / (nh / nkv)
					var sc []float64
					mx := math.Inf(-1)
					for j := from; j <= p; j++ {
						s := 0.0
						for d := 0; d < hd; d++ {
							s += q[hh*hd+d] * keys[l][j][kvh*hd+d]
						}
						s *= scale
						if c := float64(h.AttnSoftcap); c > 0 {
							s = c * math.Tanh(s/c)
						}
						sc = append(sc, s)
						mx = math.Max(mx, s)
					}
					sum := 0.0
					for i := range sc {
						sc[i] = math.Exp(sc[i] - mx)
						sum += sc[i]
					}
					for j := from; j <= p; j++ {
						w := sc[j-from] / sum
						for d := 0; d < hd; d++ {
							o[hh*hd+d] += w * vals[l][j][kvh*hd+d]
						}
					}
				}
				if h.AttnGate != 0 {
					g := r.matvec(pre+"wg", n)
					for i := range o {
						o[i] *= sigmoid64(g[i])
					}
				}
				att = r.matvec(pre+"wo", o)
			}
			if h.PostNorms != 0 {
				att = rmsnorm64(att, r.get(pre+"post_attn_norm"), eps)
			}
			for i := range x {
				x[i] += att[i]
			}
			n = rmsnorm64(x, r.get(pre+"ffn_norm"), eps)
			g := r.matvec(pre+"w1", n)
			u := r.matvec(pre+"w3", n)
			for i := range g {
				if h.Act == 1 {
					v := g[i]
					g[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
				} else {
					g[i] = silu64(g[i])
				}
				g[i] *= u[i]
			}
			ffn := r.matvec(pre+"w2", g)
			if h.PostNorms != 0 {
				ffn = rmsnorm64(ffn, r.get(pre+"post_ffn_norm"), eps)
			}
			for i := range x {
				x[i] += ffn[i]
			}
		}
		n := rmsnorm64(x, r.get("final_norm"), eps)
		if r.hidden != nil {
			*r.hidden = append(*r.hidden, n)
		}
		cls := "wcls"
		if h.SharedClassifier != 0 {
			cls = "tok_emb"
		}
		lg := r.matvec(cls, n)
		if c := float64(h.FinalSoftcap); c > 0 {
			for i := range lg {
				lg[i] = c * math.Tanh(lg[i]/c)
			}
		}
		out = append(out, lg)
	}
	return out
}

// linear is the gated delta rule of ARCHITECTURES.md §7 for one position.
func (r *refModel) linear(l int, pre string, n []float64, hist, states [][][]float64) []float64 {
	h := r.h
	K, V, dk, dv, kc := int(h.LinKHeads), int(h.LinVHeads), int(h.LinKDim), int(h.LinVDim), int(h.LinConv)
	u := r.matvec(pre+"lqkv", n)
	z := r.matvec(pre+"lz", n)
	b := r.matvec(pre+"lb", n)
	a := r.matvec(pre+"la", n)
	C := len(u)
	hist[l] = append(hist[l], u)
	t := len(hist[l]) - 1
	conv := r.get(pre + "lconv")
	uc := make([]float64, C)
	for c := 0; c < C; c++ {
		s := 0.0
		for j := 0; j < kc; j++ {
			src := t - (kc - 1) + j
			if src >= 0 {
				s += conv[c*kc+j] * hist[l][src][c]
			}
		}
		uc[c] = silu64(s)
	}
	if states[l] == nil {
		states[l] = make([][]float64, V)
		for i := range states[l] {
			states[l][i] = make([]float64, dk*dv)
		}
	}
	l2 := func(x []float64) []float64 {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		o := make([]float64, len(x))
		for i, v := range x {
			o[i] = v / math.Sqrt(ss+1e-6)
		}
		return o
	}
	dtb, alog, lnorm := r.get(pre+"dt_bias"), r.get(pre+"A_log"), r.get(pre+"lnorm")
	out := make([]float64, V*dv)
	for hh := 0; hh < V; hh++ {
		kh := hh / (V / K)
		q := l2(uc[kh*dk : (kh+1)*dk])
		for i := range q {
			q[i] /= math.Sqrt(float64(dk))
		}
		k := l2(uc[K*dk+kh*dk : K*dk+(kh+1)*dk])
		v := uc[2*K*dk+hh*dv : 2*K*dk+(hh+1)*dv]
		beta := sigmoid64(b[hh])
		sp := math.Log1p(math.Exp(a[hh] + dtb[hh]))
		g := -math.Exp(alog[hh]) * sp
		S := states[l][hh]
		for i := range S {
			S[i] *= math.Exp(g)
		}
		for j := 0; j < dv; j++ {
			m := 0.0
			for i := 0; i < dk; i++ {
				m += S[i*dv+j] * k[i]
			}
			delta := beta * (v[j] - m)
			for i := 0; i < dk; i++ {
				S[i*dv+j] += k[i] * delta
			}
		}
		o := make([]float64, dv)
		for j := 0; j < dv; j++ {
			for i := 0; i < dk; i++ {
				o[j] += S[i*dv+j] * q[i]
			}
		}
		o = rmsnorm64(o, lnorm, float64(h.NormEps))
		for j := range o {
			out[hh*dv+j] = o[j] * silu64(z[hh*dv+j])
		}
	}
	return r.matvec(pre+"lout", out)
}
