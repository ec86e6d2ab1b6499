package infer

import "math"

// rope holds the inverse frequencies of one RoPE variant (global or local base)
// and the factor its cos and sin are multiplied by (yarn's rope_attn_factor).
type rope struct {
	inv    []float32 // rot_dim/2 inverse frequencies
	factor float32
}

// newRope computes the inverse frequencies as transformers does, in float64
// rounded once to float32: inv_i = theta^(-2i/rot_dim), then the llama3, linear
// or yarn rescaling of SPEC.md (with rot_dim in place of head_dim, SPEC-NOTES.md).
func newRope(c *Config, local bool) *rope {
	half := c.RotDim / 2
	r := &rope{inv: make([]float32, half), factor: 1}
	theta := float64(c.RopeTheta)
	typ := c.RopeType
	if local {
		theta = float64(c.RopeLocalTheta)
		typ = ropePlain
	}
	dim := float64(c.RotDim)
	f := float64(c.RopeFactor)
	for i := range half {
		inv := 1 / math.Pow(theta, float64(2*i)/dim)
		switch typ {
		case ropeLinear:
			inv /= f
		case ropeLlama3:
			lo, hi, orig := float64(c.RopeLow), float64(c.RopeHigh), float64(c.RopeOrigMaxSeq)
			wavelen := 2 * math.Pi / inv
			switch {
			case wavelen < orig/hi:
			case wavelen > orig/lo:
				inv /= f
			default:
				s := (orig/wavelen - lo) / (hi - lo)
				inv = (1-s)*inv/f + s*inv
			}
		case ropeYarn:
			lo, hi := yarnRange(c, theta)
			ramp := (float64(i) - lo) / (hi - lo)
			ramp = math.Min(math.Max(ramp, 0), 1)
			inv = inv/f*ramp + inv*(1-ramp)
		}
		r.inv[i] = float32(inv)
	}
	if typ == ropeYarn {
		r.factor = c.RopeAttnFactor
	}
	return r
}

// yarnRange returns the correction range [lo, hi] of yarn in pair indices, as
// transformers' find_correction_range with truncation (hi gets +0.001 when equal).
func yarnRange(c *Config, theta float64) (lo, hi float64) {
	dim := float64(c.RotDim)
	orig := float64(c.RopeOrigMaxSeq)
	d := func(rot float64) float64 {
		return dim * math.Log(orig/(rot*2*math.Pi)) / (2 * math.Log(theta))
	}
	lo = math.Max(math.Floor(d(float64(c.RopeLow))), 0)
	hi = math.Min(math.Ceil(d(float64(c.RopeHigh))), dim-1)
	if lo == hi {
		hi += 0.001
	}
	return lo, hi
}

// table writes cos and sin of position pos (rot_dim/2 each): the angle is the
// float32 product float32(pos)·inv_i as transformers forms it, its cosine and
// sine are rounded to float32 and multiplied by the factor.
func (r *rope) table(pos int, cos, sin []float32) {
	p := float32(pos)
	for i, inv := range r.inv {
		a := float64(p * inv)
		cos[i] = float32(math.Cos(a)) * r.factor
		sin[i] = float32(math.Sin(a)) * r.factor
	}
}

// applyRope rotates the interleaved pairs (2i, 2i+1), i < len(cos), of one head:
// x0' = float32(x0·c) − float32(x1·s), x1' = float32(x0·s) + float32(x1·c).
func applyRope(x, cos, sin []float32) {
	x = x[:2*len(cos)]
	sin = sin[:len(cos)]
	for i, c := range cos {
		s := sin[i]
		x0, x1 := x[2*i], x[2*i+1]
		x[2*i] = float32(x0*c) - float32(x1*s)
		x[2*i+1] = float32(x0*s) + float32(x1*c)
	}
}
