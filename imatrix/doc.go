// Package imatrix reads and writes importance-matrix files (MLI1, SPEC.md) and turns
// their statistics into the per-column importance the Q4_0 quantizer weights by.
//
// Layout, all little-endian, no padding:
//
//	offset  type       field
//	0       char[4]    magic "MLI1"
//	4       u32        version, 1
//	8       u32        n_layers
//	12      u32        dim
//	16      u32        hidden_dim
//	20      u32        q_dim if it differs from dim, else 0
//	24      u64        tokens summed into the layers
//	32      u64        tokens summed into the classifier
//	40      float64[]  sums of squares per channel: for each layer the inputs of
//	                   wq/wk/wv (dim), wo (q_dim), w1/w3 (dim), w2 (hidden_dim);
//	                   then the classifier input (dim)
//
// The file is exactly 40 + 8·(n_layers·(2·dim + q_dim + hidden_dim) + dim) bytes.
// Parse checks the magic, the version, each dimension against the limits of
// SPEC-NOTES.md (1 to 65536; q_dim 0 to 65536), the file size against the header
// before allocating anything, and that every sum is finite and non-negative.
//
// Importance of a channel (SPEC.md): its mean squared input divided by the mean over
// all channels of the slot, with a floor of 0.001. A slot with no statistics (zero
// tokens or all sums zero) has no importance (nil), and the converter falls back to
// plain x² weighting.
package imatrix
