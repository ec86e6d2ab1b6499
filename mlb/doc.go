// Package mlb reads, writes and validates .mlb model files (SPEC.md, version 1).
//
// # Byte layout
//
// All integers and floats are little-endian.
//
//	offset  type     field
//	0       char[4]  magic "MLB1"
//	4       u32      version (1)
//	8       u32      dim                  (multiple of 32, at most 2^16)
//	12      u32      n_layers             (at most 2^16)
//	16      u32      n_heads              (divides dim unless head_dim is set)
//	20      u32      n_kv_heads           (divides n_heads)
//	24      u32      hidden_dim           (multiple of 32, at most 2^16)
//	28      u32      vocab                (3 to 2^24)
//	32      u32      max_seq              (1 to 2^24)
//	36      f32      rope_theta           (> 0)
//	40      f32      norm_eps             (>= 0)
//	44      u32      wtype                (1 Q8_0, 2 Q4_0, 3 mixed: a type table follows the layer flags)
//	48      u32      shared_classifier
//	52      u32      rope_type            (0 plain, 1 llama3, 2 linear, 3 yarn)
//	56      f32      rope_factor
//	60      f32      rope_low_freq_factor (yarn: beta_fast)
//	64      f32      rope_high_freq_factor (yarn: beta_slow)
//	68      u32      rope_orig_max_seq
//	72      u32      q8_mask              (Q4_0 only; Mask* bits)
//	76      u32      qkv_bias
//	80      u32      head_dim             (0: dim / n_heads)
//	84      u32      qk_norm
//	88      f32      rope_attn_factor     (yarn only)
//	92      u32      sliding_window       (at most 2^24)
//	96      u32      layer_flags
//	100     f32      rope_local_theta
//	104     u32      act                  (0 SiLU, 1 GELU tanh)
//	108     u32      post_norms
//	112     f32      embed_scale
//	116     f32      attn_scale
//	120     u32      scale_f16
//	124     f32      attn_softcap
//	128     f32      final_softcap
//	132     u32      rot_dim
//	136     u32      attn_gate
//	140     u32      lin_k_heads
//	144     u32      lin_v_heads
//	148     u32      lin_k_dim
//	152     u32      lin_v_dim
//	156     u32      lin_conv
//	160     u32      true_hidden_dim      (krafla extension: FFN width before padding; 0 = hidden_dim)
//	164     u32      pair_version         (krafla extension: 0 no pair record, 1 pair_id follows)
//	168     u8[16]   pair_id              (the id of the .mlt written with this model; 0 without a record)
//	184     -        zero padding to 256  (the loader refuses any nonzero byte here)
//
// pair_version and pair_id are krafla's record of the model–tokenizer pair:
// convert writes one id into both files (the .mlt's pair section holds the
// same 16 bytes), and loaders refuse a model beside a tokenizer whose id
// differs (internal/pair). pair_version is 0 or 1, and pair_id is zero
// exactly when pair_version is 0; anything else is ML_E_FORMAT. A file
// without the record has zeros there, as every earlier writer wrote.
//
// true_hidden_dim is not in SPEC.md: it lives in what SPEC.md calls padding,
// which every writer zeroes, so files without padded FFNs are unchanged and
// readers that ignore the padding compute exactly (the padded channels are
// zero). When set it is in hidden_dim−31 … hidden_dim−1, and the loader checks
// that rows true_hidden_dim.. of w1 and w3 and columns true_hidden_dim.. of w2
// store the zero code (docs/FORMATS.md).
//
// The body starts at offset 256. Every array starts at a multiple of 64 bytes and
// is zero padded to one (the padding after the last array is optional). Tensors
// lists the tensors in file order and Layout every array with its offset; a
// quantized matrix is two arrays, the quants ("<name>.q": int8 for Q8_0, packed
// nibbles for Q4_0) then the scales ("<name>.d": one f32 or f16 per 32 weights).
//
// # Loading
//
// Open maps the file (golang.org/x/sys/unix; read into memory where mmap is not
// available), checks every rule of SPEC.md's validation table and returns
// tensors whose slices point into the mapping: F32 values and f32 scales in
// place, f16 scales converted once to f32. Every Q8_0 quant is scanned for -128,
// eight bytes at a time. All size arithmetic is overflow-checked and the file
// size is checked before anything sized by the header is allocated.
//
// Errors are *Error values carrying ML_E_IO, ML_E_FORMAT or ML_E_SHAPE; match
// them with errors.Is(err, ErrFormat) and so on.
//
// # Writing
//
// Create, then for each tensor that Next names WriteF32 or WriteMatrix, then
// Close: the file is streamed into a temporary file beside the destination and
// renamed into place when complete. The writer refuses whatever the loader
// would refuse.
package mlb
