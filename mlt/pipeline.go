package mlt

// Pipeline describes a tokenizer's normalizers, pre-tokenizers and added-token
// options where the SPEC.md flags cannot (flag 512; docs/FORMATS.md).
// Placeholder: the tokenizer issue defines it.
type Pipeline struct{}

func parsePipelineSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	return formatErr(off-4, "pipeline section version %d is not supported", version)
}

func appendPipelineSection(t *Tokenizer, b []byte) []byte { return b }
