package convert

import "github.com/krafla/krafla/mlb"

// Placeholders until the imatrix and mlt packages land.

func loadImportance(path string, h *mlb.Header, warn func(string, ...any)) (func(mlb.TensorInfo) []float32, error) {
	return func(mlb.TensorInfo) []float32 { return nil }, nil
}

type tokenizer struct{}

func (t *tokenizer) write(path string) error { return nil }

func loadTokenizer(dir string, skip bool, vocab int) (*tokenizer, error) { return nil, nil }
