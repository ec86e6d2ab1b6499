package infer

// Slots of an importance matrix, in the order of an MLI1 layer (SPEC.md).
const (
	slotAttnIn  = iota // inputs of wq/wk/wv, or of lqkv/lz/lb/la (dim)
	slotAttnOut        // input of wo, or of lout where V·dv = q_dim (q_dim)
	slotFFNIn          // input of w1/w3 (dim)
	slotFFNOut         // input of w2 (hidden_dim)
)

// imatCollector adds the squares of every matrix input (float64, token by
// token in order), per SPEC.md and SPEC-NOTES.md: per layer the four slots
// above, then the classifier's input for the tokens whose logits are computed.
type imatCollector struct {
	sums        [][4][]float64 // per layer and slot
	cls         []float64      // (dim)
	layerTokens uint64
	clsTokens   uint64
}

func newImatCollector(c *Config) *imatCollector {
	ic := &imatCollector{sums: make([][4][]float64, c.NLayers), cls: make([]float64, c.Dim)}
	for l := range ic.sums {
		ic.sums[l] = [4][]float64{
			make([]float64, c.Dim), make([]float64, c.QDim),
			make([]float64, c.Dim), make([]float64, c.HiddenDim),
		}
	}
	return ic
}

// add sums x² of n rows of width cols into the layer's slot; nil-safe. Rows
// of another width than the slot's (lout's input where V·dv ≠ q_dim, which
// MLI1 has no slot for: SPEC-NOTES.md) are not collected.
func (ic *imatCollector) add(l, slot int, x []float32, n, cols int) {
	if ic == nil {
		return
	}
	sum := ic.sums[l][slot]
	if len(sum) != cols {
		return
	}
	addSquares(sum, x, n, cols)
}

func (ic *imatCollector) addClassifier(x []float32, n, cols int) {
	addSquares(ic.cls, x, n, cols)
	ic.clsTokens += uint64(n)
}

// addSquares adds x² of n rows of width cols into sum, row by row.
func addSquares(sum []float64, x []float32, n, cols int) {
	for i := range n {
		for j, v := range x[i*cols : (i+1)*cols] {
			sum[j] += float64(v) * float64(v)
		}
	}
}
