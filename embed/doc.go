// Package embed makes sentence embeddings with a model: it tokenizes each
// input (with the model's prompt and the post-processor's special tokens),
// runs batches of inputs of any lengths through infer's batched forward
// pass, pools the final-norm hidden states as sentence-transformers defines
// it (mean or maximum over the tokens, the first token, or the last one;
// the prompt's tokens left out where the model's include_prompt is false)
// and L2-normalizes the result unless the model says not.
//
// An input's vector is bit-identical whether it is embedded alone or in a
// batch with others: each row of the batched pass has the bits of the same
// tokens evaluated alone (infer.Batch), and pooling reads only the input's
// own rows, in order.
package embed
