package serve

// fimTokens gives the prompt of a suffix (fill-in-the-middle) request for
// a context of ctx positions: mlt.FIM.Prompt's ids when they fit, else
// trimmed as mlt.FIM.PromptWithin does (the prefix loses its start, the
// suffix its end: an editor may send a whole file) to leave the answer
// maxTokens positions, or a quarter of the context without a limit, and
// never more than half of it. A prompt that fits is never trimmed.
func fimTokens(e *engine, prefix, suffix string, ctx, maxTokens int) []int {
	ids := e.fim.Prompt(e.tok, prefix, suffix, e.addBOS)
	if len(ids) < ctx {
		return ids
	}
	room := ctx / 4
	if maxTokens > 0 {
		room = maxTokens
	}
	room = min(max(room, 1), ctx/2)
	ids, _ = e.fim.PromptWithin(e.tok, prefix, suffix, e.addBOS, ctx-room)
	return ids
}

// errNoFIM refuses a suffix for a model whose tokenizer has no
// fill-in-the-middle sentinels.
func errNoFIM(name string) *apiError {
	return badParam("suffix", "model %s has no fill-in-the-middle tokens (such as <|fim_prefix|>, <|fim_suffix|>, <|fim_middle|>), so it cannot insert: use a code model trained for infill (Qwen2.5-Coder, StarCoder2, DeepSeek-Coder, CodeLlama, Codestral)", quote(name))
}
