package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

// loadImportance opens an importance matrix and returns, per output
// matrix, the normalized importance of its input columns (nil: plain x²
// weighting). Matrices without statistics fall back with a warning.
func loadImportance(path string, h *mlb.Header, warn func(string, ...any)) (func(mlb.TensorInfo) []float32, error) {
	if path == "" {
		return func(mlb.TensorInfo) []float32 { return nil }, nil
	}
	f, err := imatrix.Open(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if f.NLayers != h.NLayers || f.Dim != h.Dim || f.HiddenDim != h.HiddenDim || f.QDimEff() != h.QDim() {
		return nil, fmt.Errorf("convert: %s: importance matrix for n_layers %d, dim %d, hidden_dim %d, q_dim %d does not match the model's %d, %d, %d, %d",
			path, f.NLayers, f.Dim, f.HiddenDim, f.QDimEff(), h.NLayers, h.Dim, h.HiddenDim, h.QDim())
	}
	return func(ti mlb.TensorInfo) []float32 {
		var imp []float32
		switch {
		case ti.Name == "tok_emb":
			return nil // a lookup table: no input to weight by
		case ti.Name == "wcls":
			imp = f.ClassifierImportance()
		case strings.HasPrefix(ti.Name, "blk."):
			rest := ti.Name[4:]
			dot := strings.IndexByte(rest, '.')
			l, err := strconv.Atoi(rest[:max(dot, 0)])
			s, ok := imatrix.SlotOf(rest[dot+1:])
			if err != nil || !ok {
				return nil
			}
			imp = f.Importance(l, s)
		}
		if len(imp) != ti.Cols {
			if ti.Type == mlb.Q4_0 {
				warn("%s: no importance statistics for its %d inputs in %s; plain weighting", ti.Name, ti.Cols, path)
			}
			return nil
		}
		return imp
	}, nil
}

// loadTokenizer converts dir/tokenizer.json before anything is written,
// so a tokenizer the .mlt format cannot represent stops the conversion.
func loadTokenizer(dir string, skip bool, vocab int, warn func(format string, args ...any)) (*mlt.Tokenizer, error) {
	if skip {
		return nil, nil
	}
	p := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("convert: %s: no tokenizer.json (use --no-tokenizer to convert the model alone)", dir)
	}
	t, err := mlt.FromHF(p)
	if err != nil {
		return nil, fmt.Errorf("convert: %w (use --no-tokenizer to convert the model alone)", err)
	}
	if len(t.Tokens) > vocab {
		return nil, fmt.Errorf("convert: %s: %d tokens, more than the model's vocab of %d", p, len(t.Tokens), vocab)
	}
	c, err := mlt.ReadHFChatWarn(dir, t, func(s string) { warn("%s", s) })
	if err != nil {
		return nil, err
	}
	t.SetChat(c)
	e, err := mlt.ReadHFEmbed(dir)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if e != nil {
		t.SetEmbed(e)
	}
	return t, nil
}
