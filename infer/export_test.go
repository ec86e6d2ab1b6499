package infer

import "github.com/krafla/krafla/mlb"

// RefHidden runs the float64 reference (ref_test.go) over tokens and returns
// each position's final-norm hidden state, for the embedding tests of the
// external test package (which may import embed; this package may not).
func RefHidden(f *mlb.File, qact bool, tokens []int) [][]float64 {
	var h [][]float64
	r := newRef(f, qact)
	r.hidden = &h
	r.logits(tokens)
	return h
}
