// Package infer runs .mlb models on the CPU: it maps the file, repacks the
// weights once into the kernels' layout (asm.Packed), keeps a KV cache in
// f32 or f16 (a ring of the window for sliding-window layers, only the
// recurrent state for linear-attention layers), evaluates prompts in batches
// through each layer, samples tokens, and collects importance matrices, perplexity and KL
// divergence.
//
// Use:
//
//	m, err := infer.Open("llama.mlb")             // mlb.Open validates the mapped file
//	s, err := m.NewSession(infer.SessionOptions{Ctx: 4096, Threads: 2})
//	err = s.Eval(tokens, false, func(i int, logits []float32) error { ... })
//	res, err := infer.Generate(ctx, s, prompt, infer.GenerateOptions{MaxTokens: 64,
//		Stop: tok.StopTokens(), Sampler: infer.NewSampler(opts)}, emit)
//	r, err := infer.Perplexity(ctx, s, base, ids, infer.ChunkOptions{Chunk: 512, BOS: -1}, nil)
//	f, err := infer.Imatrix(ctx, s, ids, infer.ChunkOptions{Chunk: 512, BOS: -1}, nil) // MLI1
//	b, err := m.NewBatch(infer.BatchOptions{Ctx: 4096, Threads: 2}) // several sessions, one pass
//	err = b.Eval([]infer.BatchItem{{Session: s1, Tokens: next1, Logits: true},
//		{Session: s2, Tokens: promptChunk}}, func(item int, logits []float32) error { ... })
//
// The forward pass follows SPEC.md and ARCHITECTURES.md §5 and §7: pre-norm or
// sandwich (post_norms) blocks; GQA attention with optional q/k/v biases,
// per-head q/k RMSNorm, interleaved RoPE on the first rot_dim dimensions (plain,
// llama3, linear or yarn with rope_attn_factor; rope_local_theta unscaled on
// flagged layers; none on no-RoPE layers), score scale and softcap, sliding
// window (position p sees p−w+1 … p) and sigmoid output gate; gated delta rule
// layers with their causal convolution; SiLU or GELU-tanh FFN; embedding scale,
// final softcap and a shared or separate classifier.
//
// Determinism: for a given file, token sequence and sampling seed the logits are
// bit-identical whatever the thread count, whichever kernel variant runs and
// however the prompt is split into batches, and whatever other sessions share
// a Batch's pass. Quantized products come from
// package asm, whose pure-Go kernels define the bits; threads split output rows
// (or independent heads and channels), never one reduction. Every float
// reduction in this package has a fixed order, written in its kernel's comment
// (dotF32's 8 lanes, the attention's weighted sum over increasing positions), and products are
// rounded before they are added (float32(a*b) + c) so that no compiler may fuse
// them into an FMA; SIMD twins of these kernels can reproduce them exactly.
//
// Speed: Model.CopyToHugePages repacks the weights out of the file mapping
// into transparent huge pages (krafla run and bench do it by default; else
// the first pass repacks them into ordinary memory), which removes a TLB miss
// every 4 KiB of the weight stream; the worker pool's
// threads spin briefly between products instead of sleeping, since a token
// runs hundreds of products of a few microseconds each.
//
// Activations are quantized to Q8_0 with SPEC.md's rule (asm.QuantizeQ8_0)
// immediately before each quantized product; everything else is float32, the
// KV cache included.
package infer
