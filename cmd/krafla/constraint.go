package main

import (
	"fmt"
	"os"

	"github.com/krafla/krafla/grammar"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// grammarConstraint adapts a grammar state to infer.Constraint.
type grammarConstraint struct {
	st   *grammar.State
	v    *grammar.Vocab
	mask []uint64
}

func (c *grammarConstraint) Restrict(logits []float32) error {
	if err := c.st.Mask(c.v, c.mask); err != nil {
		return err
	}
	grammar.MaskLogits(logits, c.mask, c.v.Len())
	return nil
}

func (c *grammarConstraint) Accept(tok int) error { return c.st.AcceptToken(c.v, tok) }
func (c *grammarConstraint) Done() bool           { return c.st.Done() }

// loadConstraint compiles --json-schema or --grammar (nil when neither);
// stops end the output where it is complete.
func loadConstraint(schema, gbnf string, tok *mlt.Tokenizer, stops []int) (infer.Constraint, error) {
	mk, err := constraintMaker(schema, gbnf, tok, stops)
	if mk == nil || err != nil {
		return nil, err
	}
	return mk(), nil
}

// constraintMaker compiles --json-schema or --grammar once and returns what
// makes a fresh constraint for each output (nil when neither is given).
func constraintMaker(schema, gbnf string, tok *mlt.Tokenizer, stops []int) (func() infer.Constraint, error) {
	if schema == "" && gbnf == "" {
		return nil, nil
	}
	if schema != "" && gbnf != "" {
		return nil, usageError{fmt.Errorf("--json-schema and --grammar: give one")}
	}
	path := schema + gbnf
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g *grammar.Grammar
	if schema != "" {
		g, err = grammar.CompileJSONSchema(b)
	} else {
		g, err = grammar.CompileGBNF(string(b))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	toks, ctl := tok.TokenBytes()
	if len(stops) == 0 {
		stops = tok.StopTokens()
	}
	var in []int
	for _, s := range stops {
		if s >= 0 && s < len(toks) {
			in = append(in, s)
		}
	}
	stops = in
	v, err := grammar.NewVocab(toks, ctl, stops)
	if err != nil {
		return nil, err
	}
	return func() infer.Constraint {
		return &grammarConstraint{st: g.NewState(), v: v, mask: make([]uint64, v.Words())}
	}, nil
}
