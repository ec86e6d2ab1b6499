package serve

import "testing"

// FuzzRequest feeds arbitrary bodies to the request decoders of both
// generation endpoints: they must return a prompt or an error, never panic.
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
		var ae *apiError
		if chat {
			prompt, _, ae = s.decodeChat(body, e)
		} else {
			prompt, _, ae = s.decodeCompletion(body, e)
		}
		if ae == nil && (len(prompt) == 0 || len(prompt) >= 64) {
			t.Fatalf("accepted a prompt of %d tokens for a context of 64", len(prompt))
		}
		if ae != nil && (ae.Status < 400 || ae.Message == "") {
			t.Fatalf("error %+v: want a 4xx with a message", ae)
		}
	})
}
