package imatrix_test

import (
	"fmt"

	"github.com/krafla/krafla/imatrix"
)

// A converter looks up the importance of a matrix's input channels; nil means no
// statistics and plain x² weighting.
func Example() {
	f := imatrix.New(1, 4, 8, 4) // 1 layer, dim 4, hidden_dim 8, q_dim = dim
	f.LayerTokens = 2
	imatrix.AddSquares(f.Slot(0, imatrix.FFNIn), []float32{1, 1, 2, 0})
	imatrix.AddSquares(f.Slot(0, imatrix.FFNIn), []float32{1, 1, 2, 0})

	s, _ := imatrix.SlotOf("w3")
	fmt.Println(s, f.Importance(0, s))
	fmt.Println(f.Importance(0, imatrix.FFNOut))
	// Output:
	// ffn_in [0.6666667 0.6666667 2.6666667 0.001]
	// []
}
