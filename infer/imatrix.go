package infer

import (
	"context"
	"fmt"

	"github.com/krafla/krafla/imatrix"
)

// StartImatrix makes the session sum the squares of every matrix input from now
// on, into a fresh collection; TakeImatrix returns it as an MLI1 file.
func (s *Session) StartImatrix() { s.imat = newImatCollector(&s.m.cfg) }

// TakeImatrix stops collecting and returns the statistics gathered since
// StartImatrix, or nil if it was not called.
func (s *Session) TakeImatrix() *imatrix.File {
	ic := s.imat
	if ic == nil {
		return nil
	}
	s.imat = nil
	c := &s.m.cfg
	f := imatrix.New(c.NLayers, c.Dim, c.HiddenDim, c.QDim)
	slots := [4]imatrix.Slot{imatrix.AttnIn, imatrix.AttnOut, imatrix.FFNIn, imatrix.FFNOut}
	for l := range ic.sums {
		for k, sl := range slots {
			copy(f.Slot(l, sl), ic.sums[l][k])
		}
	}
	copy(f.Classifier(), ic.cls)
	f.LayerTokens = ic.layerTokens
	f.ClassifierTokens = ic.clsTokens
	return f
}

// Imatrix evaluates the tokens chunk by chunk, computing the logits of every
// position (so every token also reaches the classifier), and returns the sums
// of squares of every matrix input as an MLI1 file.
func Imatrix(ctx context.Context, s *Session, tokens []int, opt ChunkOptions, progress func(done, total int)) (*imatrix.File, error) {
	chunks, err := opt.chunks(tokens, s.ctx)
	if err != nil {
		return nil, err
	}
	s.StartImatrix()
	defer func() { s.imat = nil }()
	for ci, in := range chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.Reset()
		if err := s.Eval(in, true, nil); err != nil {
			return nil, fmt.Errorf("chunk %d: %w", ci, err)
		}
		if progress != nil {
			progress(ci+1, len(chunks))
		}
	}
	return s.TakeImatrix(), nil
}
