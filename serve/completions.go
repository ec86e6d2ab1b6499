package serve

// decodeCompletion checks a completion request (POST /v1/completions) and
// tokenizes its prompt.
func (s *Server) decodeCompletion(body []byte, e *engine) ([]int, genParams, *apiError) {
	f, ae := decodeObject(body)
	if ae == nil {
		ae = s.checkUnsupported(f)
	}
	var p genParams
	if ae == nil {
		p, ae = parseGen(f, e.vocab, false)
	}
	if ae == nil {
		ae = s.checkModel(p.model, e)
	}
	var text, suffix string
	var prompt []int
	if ae == nil {
		text, prompt, ae = parsePrompt(f)
	}
	if ae == nil {
		_, ae = f.str("suffix", &suffix)
	}
	switch {
	case ae != nil:
	case suffix != "":
		// fill-in-the-middle: the prompt is the text before the insertion
		if e.fim == nil {
			ae = errNoFIM(p.model)
		} else if prompt != nil {
			ae = badParam("prompt", "must be a string when suffix is given")
		} else {
			prompt, p.fim = fimTokens(e, text, suffix, e.ctx, p.maxTokens), true
		}
	case prompt == nil:
		prompt = e.tok.EncodePrompt(text)
	}
	if ae == nil {
		ae = checkPrompt("prompt", prompt, e)
	}
	return prompt, p, ae
}

// checkUnsupported refuses the legacy parameters whose meaning the server
// does not implement, rather than ignoring them.
func (s *Server) checkUnsupported(f fields) *apiError {
	var echo bool
	if _, e := f.boolean("echo", &echo); e != nil || echo {
		return firstErr(e, badParam("echo", "not supported"))
	}
	bestOf := 1
	if _, e := f.integer("best_of", &bestOf, 1, 1); e != nil {
		return badParam("best_of", "only 1 is supported")
	}
	return nil
}

func firstErr(a, b *apiError) *apiError {
	if a != nil {
		return a
	}
	return b
}

// checkModel answers 404 for a model other than the one served (with a
// catalog, the dispatcher chose e by the request's model already).
func (s *Server) checkModel(name string, e *engine) *apiError {
	if s.reg != nil {
		if e == nil {
			return errModelNotFound(name)
		}
		return nil
	}
	if name != s.cfg.Name {
		return errNotFound("the model "+quote(name)+" does not exist; this server has "+quote(s.cfg.Name), "model_not_found")
	}
	return nil
}

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return `"` + s + `"`
}

// completionAnswer formats the text_completion object.
type completionAnswer struct {
	base
	offset int // text_offset of the next token
}

type legacyLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

func (a *completionAnswer) logprobs(lps []tokenLogprob) *legacyLogprobs {
	if lps == nil {
		return nil
	}
	l := &legacyLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
	for _, lp := range lps {
		l.Tokens = append(l.Tokens, lp.text)
		l.TokenLogprobs = append(l.TokenLogprobs, lp.logprob)
		top := map[string]float64{}
		for _, t := range lp.top {
			top[t.text] = t.logprob
		}
		l.TopLogprobs = append(l.TopLogprobs, top)
		l.TextOffset = append(l.TextOffset, a.offset)
		a.offset += len(lp.text)
	}
	return l
}

func (a *completionAnswer) head() any { return nil }

func (a *completionAnswer) chunk(text string, lps []tokenLogprob, finish string) any {
	c := map[string]any{"index": 0, "text": text, "logprobs": a.logprobs(lps), "finish_reason": nil}
	if finish != "" {
		c["finish_reason"] = finish
	}
	return a.object("text_completion", []any{c}, nil)
}

func (a *completionAnswer) usageChunk(res *result) any {
	return a.object("text_completion", []any{}, usageOf(res))
}

func (a *completionAnswer) whole(text string, lps []tokenLogprob, res *result) any {
	c := map[string]any{"index": 0, "text": text, "logprobs": a.logprobs(lps), "finish_reason": res.finish}
	return a.object("text_completion", []any{c}, usageOf(res))
}
