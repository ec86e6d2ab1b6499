// Package infer runs .mlb models on the CPU: it maps the weights in place, keeps
// a KV cache (a ring of the window for sliding-window layers, only the recurrent
// state for linear-attention layers), evaluates prompts in batches through each
// layer, samples tokens, and collects importance matrices, perplexity and KL
// divergence.
//
// Determinism: for a given file, token sequence and sampling seed the logits are
// bit-identical whatever the thread count and however the prompt is split into
// batches. Quantized products come from package asm, whose pure-Go kernels define
// the bits; threads split output rows (or independent heads), never one
// reduction. Every float reduction in this package has a fixed order, written
// out in the kernel's comment, and products are rounded before they are added
// (float32(a*b) + c) so that no compiler may fuse them into an FMA; SIMD twins of
// these kernels can then reproduce them exactly.
//
// Activations are quantized to Q8_0 with SPEC.md's rule (asm.QuantizeQ8_0)
// immediately before each quantized product; everything else is float32.
package infer
