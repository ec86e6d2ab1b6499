package infer

import (
	"math"
	"testing"
)

// The reference frequencies below are written from transformers'
// modeling_rope_utils.py (_compute_llama3_parameters, _compute_yarn_parameters,
// _compute_linear_scaling_rope_parameters) in their vectorized form, in float64,
// not from rope.go: base frequencies first, then the masks HF builds.

// hfBase is HF's inv_freq = 1 / base^(arange(0, dim, 2)/dim).
func hfBase(theta float64, dim int) []float64 {
	inv := make([]float64, dim/2)
	for j := range inv {
		inv[j] = 1 / math.Pow(theta, float64(2*j)/float64(dim))
	}
	return inv
}

// hfLlama3 returns the llama3 frequencies and, per pair, its region: 'h' high
// frequency (kept), 'l' low frequency (÷ factor), 'm' medium (smoothed).
func hfLlama3(theta float64, dim int, factor, low, high, orig float64) ([]float64, []byte) {
	inv := hfBase(theta, dim)
	lowWavelen, highWavelen := orig/low, orig/high
	out := make([]float64, len(inv))
	region := make([]byte, len(inv))
	for j, f := range inv {
		wavelen := 2 * math.Pi / f
		llama := f
		if wavelen > lowWavelen {
			llama = f / factor
		}
		smooth := (orig/wavelen - low) / (high - low)
		smoothed := (1-smooth)*llama/factor + smooth*llama
		medium := !(wavelen < highWavelen) && !(wavelen > lowWavelen)
		switch {
		case medium:
			out[j], region[j] = smoothed, 'm'
		case wavelen > lowWavelen:
			out[j], region[j] = llama, 'l'
		default:
			out[j], region[j] = llama, 'h'
		}
	}
	return out, region
}

// hfYarn returns the yarn frequencies and the ramp value per pair (0: pure
// extrapolation, the base frequency; 1: pure interpolation, ÷ factor).
func hfYarn(theta float64, dim int, factor, betaFast, betaSlow, orig float64) ([]float64, []float64) {
	corrDim := func(rot float64) float64 {
		return float64(dim) * math.Log(orig/(rot*2*math.Pi)) / (2 * math.Log(theta))
	}
	low := math.Max(math.Floor(corrDim(betaFast)), 0)
	high := math.Min(math.Ceil(corrDim(betaSlow)), float64(dim-1))
	if low == high {
		high += 0.001
	}
	inv := make([]float64, dim/2)
	ramp := make([]float64, dim/2)
	for j := range inv {
		posFreq := math.Pow(theta, float64(2*j)/float64(dim))
		extra, inter := 1/posFreq, 1/(factor*posFreq)
		lin := (float64(j) - low) / (high - low)
		r := math.Min(math.Max(lin, 0), 1)
		extraFactor := 1 - r
		inv[j] = inter*(1-extraFactor) + extra*extraFactor
		ramp[j] = r
	}
	return inv, ramp
}

// checkInv compares newRope's float32 frequencies with the float64 reference.
func checkInv(t *testing.T, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d frequencies, want %d", len(got), len(want))
	}
	for j, w := range want {
		if d := math.Abs(float64(got[j]) - w); d > 2e-7*math.Abs(w) {
			t.Errorf("pair %d: inv %.9g, want %.9g (HF formula)", j, got[j], w)
		}
	}
}

// TestRopeLlama3Band checks the llama3 scaling of real Llama 3.1/3.2 configs,
// whose frequencies fall in all three regions: several pairs of every head lie in
// the smoothed band between orig/high and orig/low wavelengths.
func TestRopeLlama3Band(t *testing.T) {
	for _, tc := range []struct {
		name              string
		theta             float64
		dim               int
		factor, low, high float64
		orig              int
		minMedium         int
	}{
		{"llama3.1-8b", 5e5, 128, 8, 1, 4, 8192, 5},
		{"llama3.2-1b", 5e5, 64, 32, 1, 4, 8192, 2},
		{"llama3.2-3b", 5e5, 128, 32, 1, 4, 8192, 5},
		// A narrow original context puts the band on early pairs; partial
		// rot_dim (the denominator is rot_dim, not head_dim).
		{"small-orig", 1e4, 32, 4, 1, 8, 256, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{RotDim: tc.dim, RopeTheta: float32(tc.theta), RopeType: ropeLlama3,
				RopeFactor: float32(tc.factor), RopeLow: float32(tc.low), RopeHigh: float32(tc.high),
				RopeOrigMaxSeq: tc.orig, RopeAttnFactor: 1}
			want, region := hfLlama3(tc.theta, tc.dim, tc.factor, tc.low, tc.high, float64(tc.orig))
			n := map[byte]int{}
			for _, r := range region {
				n[r]++
			}
			if n['m'] < tc.minMedium || n['h'] == 0 || n['l'] == 0 {
				t.Fatalf("regions %q: the case must cross the band (≥%d medium pairs, and high and low ones)", region, tc.minMedium)
			}
			r := newRope(c, false)
			checkInv(t, r.inv, want)
			base := hfBase(tc.theta, tc.dim)
			for j, g := range r.inv {
				g := float64(g)
				// In the band the frequency lies strictly between inv/f and inv.
				if region[j] == 'm' && !(g > base[j]/tc.factor && g < base[j]) {
					t.Errorf("pair %d in the band: inv %g not between %g and %g", j, g, base[j]/tc.factor, base[j])
				}
			}
			if r.factor != 1 {
				t.Errorf("factor %g, want 1 (only yarn scales cos/sin)", r.factor)
			}
		})
	}
}

// TestRopeYarnRamp checks yarn on configs whose correction range spans several
// pairs (Qwen3's recommended yarn, a DeepSeek-like one), and the edges: a range
// clamped at 0 and at dim-1, and lo == hi (HF adds 0.001).
func TestRopeYarnRamp(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		theta                      float64
		dim                        int
		factor, betaFast, betaSlow float64
		orig                       int
		attn                       float32
		minRamp                    int // pairs strictly inside the ramp
	}{
		{"qwen3-yarn4", 1e6, 128, 4, 32, 1, 32768, float32(0.1*math.Log(4) + 1), 5},
		{"deepseek-like", 1e4, 64, 40, 32, 1, 4096, 1.25, 5},
		// orig tiny: the whole range is below 0, so it clamps to lo = 0.
		{"clamp-low", 1e4, 16, 2, 32, 1, 8, 1, 0},
		// orig huge: hi clamps to dim-1.
		{"clamp-high", 1e4, 16, 8, 32, 1, 1 << 30, 1, 0},
		// beta_fast == beta_slow: the range is [floor d, ceil d], one pair wide.
		{"equal-betas", 1e4, 32, 4, 2, 2, 2048, 1, 0},
		// orig 4: both ends clamp to 0 and hi becomes 0.001.
		{"lo-equals-hi", 1e4, 16, 4, 32, 1, 4, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{RotDim: tc.dim, RopeTheta: float32(tc.theta), RopeType: ropeYarn,
				RopeFactor: float32(tc.factor), RopeLow: float32(tc.betaFast), RopeHigh: float32(tc.betaSlow),
				RopeOrigMaxSeq: tc.orig, RopeAttnFactor: tc.attn}
			want, ramp := hfYarn(tc.theta, tc.dim, tc.factor, tc.betaFast, tc.betaSlow, float64(tc.orig))
			inside := 0
			for _, r := range ramp {
				if r > 0 && r < 1 {
					inside++
				}
			}
			if inside < tc.minRamp {
				t.Fatalf("ramp %v: want ≥%d pairs inside it", ramp, tc.minRamp)
			}
			r := newRope(c, false)
			checkInv(t, r.inv, want)
			if r.factor != tc.attn {
				t.Errorf("factor %g, want the attention factor %g", r.factor, tc.attn)
			}
			// cos and sin carry the attention factor.
			cos, sin := make([]float32, len(r.inv)), make([]float32, len(r.inv))
			r.table(7, cos, sin)
			for j := range cos {
				a := float64(float32(7) * float32(want[j]))
				wc, ws := math.Cos(a)*float64(tc.attn), math.Sin(a)*float64(tc.attn)
				if math.Abs(float64(cos[j])-wc) > 1e-5 || math.Abs(float64(sin[j])-ws) > 1e-5 {
					t.Errorf("pair %d at pos 7: cos,sin %g,%g, want %g,%g", j, cos[j], sin[j], wc, ws)
				}
			}
		})
	}
	// The edge cases hit what they name.
	lo, hi := yarnRange(&Config{RotDim: 16, RopeOrigMaxSeq: 8, RopeLow: 32, RopeHigh: 1}, 1e4)
	if lo != 0 {
		t.Errorf("clamp-low: lo %g, want 0", lo)
	}
	_, hi = yarnRange(&Config{RotDim: 16, RopeOrigMaxSeq: 1 << 30, RopeLow: 32, RopeHigh: 1}, 1e4)
	if hi != 15 {
		t.Errorf("clamp-high: hi %g, want 15", hi)
	}
	// orig 4 < 2π·beta_slow: both ends clamp to 0, lo == hi, and HF adds 0.001.
	lo, hi = yarnRange(&Config{RotDim: 16, RopeOrigMaxSeq: 4, RopeLow: 32, RopeHigh: 1}, 1e4)
	if lo != 0 || hi != 0.001 {
		t.Errorf("lo == hi: range [%g, %g], want [0, 0.001]", lo, hi)
	}
}

// TestRopeLinearPlainLocal checks the remaining types: linear divides every
// frequency by the factor; plain keeps them; a local (Gemma 3 sliding) layer uses
// the local base unscaled even when the global type scales.
func TestRopeLinearPlainLocal(t *testing.T) {
	c := &Config{RotDim: 64, RopeTheta: 1e6, RopeType: ropeLinear, RopeFactor: 8, RopeLocalTheta: 1e4, RopeAttnFactor: 1}
	base := hfBase(1e6, 64)
	want := make([]float64, len(base))
	for j, b := range base {
		want[j] = b / 8
	}
	checkInv(t, newRope(c, false).inv, want)
	checkInv(t, newRope(c, true).inv, hfBase(1e4, 64))
	c.RopeType = ropePlain
	checkInv(t, newRope(c, false).inv, base)
	// Llama 3 and yarn layers marked local are unscaled too.
	for _, typ := range []int{ropeLlama3, ropeYarn} {
		c := &Config{RotDim: 32, RopeTheta: 5e5, RopeType: typ, RopeFactor: 8, RopeLow: 1, RopeHigh: 4,
			RopeOrigMaxSeq: 8192, RopeLocalTheta: 1e4, RopeAttnFactor: 1.5}
		r := newRope(c, true)
		checkInv(t, r.inv, hfBase(1e4, 32))
		if r.factor != 1 {
			t.Errorf("type %d local: factor %g, want 1", typ, r.factor)
		}
	}
}
