package serve

import (
	"fmt"
	"testing"
)

// FuzzRequest feeds arbitrary bodies to the request decoders of both
// generation endpoints: they must return a prompt or an error, never panic,
// and every accepted request has its parameters in the ranges the OpenAI API
// and docs/RELIABILITY.md give (checkParams).
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"tiny","prompt":"hi","max_tokens":3,"stop":["a"],"logprobs":2,"logit_bias":{"5":-1}}`,
		`{"model":"tiny","prompt":[1,2,3],"temperature":0.5,"top_p":0.9,"seed":-4,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"tiny","prompt":[[1,2]],"n":1,"echo":false,"suffix":"","best_of":1}`,
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"logprobs":true,"top_logprobs":3}`,
		`{"model":"tiny","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"tools":[{"type":"function"}],"chat_template_kwargs":{"x":1}}`,
		`{"model":"tiny","messages":[{"role":"assistant","content":null}],"response_format":{"type":"text"}}`,
		`{"model":1}`, `[]`, `null`, `{`, `{"prompt":"` + "\xff" + `"}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	s, _ := startServer(f, Config{Ctx: 64})
	e := s.eng.Load()
	f.Fuzz(func(t *testing.T, body []byte, chat bool) {
		var prompt []int
		var p genParams
		var ae *apiError
		if chat {
			prompt, p, ae = s.decodeChat(body, e)
		} else {
			prompt, p, ae = s.decodeCompletion(body, e)
		}
		if ae == nil && (len(prompt) == 0 || len(prompt) >= 64) {
			t.Fatalf("accepted a prompt of %d tokens for a context of 64", len(prompt))
		}
		if ae == nil {
			if msg := checkParams(prompt, p, e.vocab, chat); msg != "" {
				t.Fatalf("accepted %q: %s", body, msg)
			}
		}
		if ae != nil && (ae.Status < 400 || ae.Message == "") {
			t.Fatalf("error %+v: want a 4xx with a message", ae)
		}
	})
}

// checkParams returns what is out of range in an accepted request, or "".
// The ranges are OpenAI's API reference's: temperature 0…2, top_p 0…1,
// penalties −2…2, at most 4 stop sequences, top_logprobs 0…20 (chat) or
// logprobs 0…5 (completions), logit_bias −100…100 on token ids.
func checkParams(prompt []int, p genParams, vocab int, chat bool) string {
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi } // false for NaN
	switch {
	case p.model != "tiny":
		return fmt.Sprintf("model %q, the server's is tiny", p.model)
	case p.maxTokens < 0:
		return fmt.Sprintf("max_tokens %d", p.maxTokens)
	case !in(p.temperature, 0, 2):
		return fmt.Sprintf("temperature %v", p.temperature)
	case !in(p.topP, 0, 1):
		return fmt.Sprintf("top_p %v", p.topP)
	case !in(p.minP, 0, 1):
		return fmt.Sprintf("min_p %v", p.minP)
	case p.topK < 0:
		return fmt.Sprintf("top_k %d", p.topK)
	case !in(p.presence, -2, 2) || !in(p.frequency, -2, 2):
		return fmt.Sprintf("penalties %v, %v", p.presence, p.frequency)
	case len(p.stop) > 4:
		return fmt.Sprintf("%d stop sequences", len(p.stop))
	case chat && !in(float64(p.topLogprobs), 0, 20), !chat && !in(float64(p.topLogprobs), 0, 5):
		return fmt.Sprintf("top_logprobs %d", p.topLogprobs)
	case !p.logprobs && p.topLogprobs > 0:
		return fmt.Sprintf("top_logprobs %d without logprobs", p.topLogprobs)
	}
	for _, s := range p.stop {
		if len(s) > 256 {
			return fmt.Sprintf("a stop sequence of %d bytes", len(s))
		}
	}
	for id, b := range p.logitBias {
		if id < 0 || id >= vocab || !in(float64(b), -100, 100) {
			return fmt.Sprintf("logit_bias %d: %v", id, b)
		}
	}
	for _, id := range prompt {
		if id < 0 || id >= vocab {
			return fmt.Sprintf("prompt token %d outside the vocabulary of %d", id, vocab)
		}
	}
	return ""
}
