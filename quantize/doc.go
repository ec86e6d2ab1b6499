// Package quantize implements the Q8_0 and Q4_0 block formats of SPEC.md exactly:
// the writer's rules (Q8_0, Q4_0 best fit, llama.cpp's Q4_0 round rule, importance
// weighting), the activation quantizer the runtime uses (Q8_0), and dequantization.
//
// A matrix is stored as SPEC.md says, not as interleaved ggml blocks: one array of
// quants for the whole matrix, then one array of scales d, one per block of 32
// consecutive weights of a row, little-endian f32 or f16.
//
//	Q8_0: quant i of block b is an int8 in [-127, 127]; w = q·d
//	Q4_0: 16 bytes per block; byte j holds element j in its low nibble and element
//	      j+16 in its high nibble; w = (nibble − 8)·d
//
// Everything here is pure Go and deterministic: the same input gives the same bytes
// on every machine, every GOARCH and every thread count. Floating-point products
// that feed a sum are written as explicit conversions (float64(a*b) + c) so that no
// platform may fuse them into an FMA; KRAFLA_CROSS=1 go test -run NoFused checks
// the compiled code for arm64, ppc64le, s390x, riscv64 and amd64 v3.
//
// The types are TypeQ8_0 and TypeQ4_0 (docs/DESIGN.md calls them Q8_0 and Q4_0, but
// Q8_0 is also the activation quantizer, and Go allows one meaning per name).
//
// The choices SPEC.md leaves open are pinned by SPEC-NOTES.md and documented on
// the functions: Q8_0 (and its f16 variant), Q4_0 best fit (13 candidates, x²
// weighting, the first candidate with the smallest weighted error wins), Q4_0 round
// (quantize_row_q4_0_ref of llama.cpp) and the importance weighting
// imp·sqrt(s² + x²) of quantize_row_q4_0_impl.
//
// DequantizeGGML dequantizes the ggml block types a mixed .mlb file keeps as
// ggml's own blocks (GGMLType: Q4_1, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS),
// bit for bit as gguf-py's quants.py does; this package does not quantize to
// them (a GGUF import copies them).
package quantize
