// Package convert turns Hugging Face checkpoints (config.json, safetensors
// weights and tokenizer.json) into .mlb model files and .mlt tokenizers.
//
// The mapping from each architecture's config and tensors onto the .mlb header
// and arrays follows ../shared/ARCHITECTURES.md: every rotate-half q/k tensor
// is permuted to the interleaved RoPE layout (only the first rot_dim rows of
// each head, and with it the q/k biases and q/k norm weights), Gemma and
// Qwen3.5 norm weights get +1, fused projections are split, Granite's
// multipliers are folded into wo, w2 and the final norm. Anything that does
// not fit the format (mixture of experts, unknown RoPE scaling, tensors the
// mapping does not consume, pre-quantized weights) is refused by name.
//
// Conversion runs tensor by tensor: each source tensor is mapped from the
// file, converted to float32 a chunk of rows at a time and quantized, so peak
// memory is about the largest quantized matrix, not the model. The output is
// written to a temporary file, renamed into place when complete, and opened
// again with mlb.Open before Convert reports success.
package convert
