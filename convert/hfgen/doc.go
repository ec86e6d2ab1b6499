// Package hfgen writes small Hugging Face style checkpoints with deterministic
// random weights: config.json, model.safetensors (or shards with
// model.safetensors.index.json) and a small byte-level tokenizer.json.
//
// The checkpoints use the real tensor names and config keys of each
// architecture Krafla converts (see Archs), so they exercise the converter's
// mapping, and through it the runtime, without downloading a model. Besides
// the tiny test shapes, the "llama" family can be written in the full shapes
// of SmolLM2-135M and Llama-3.2-1B for benchmarks. The weights are random:
// the models compute, but say nothing.
package hfgen
