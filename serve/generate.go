package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"
)

// answer formats one endpoint's responses.
type answer interface {
	// head, when not nil, is the first event of a stream (chat: the role).
	head() any
	// chunk is a streamed event: text with its tokens' log probabilities,
	// and finish ("" until the last).
	chunk(text string, lps []tokenLogprob, finish string) any
	// usageChunk is the last event when stream_options.include_usage is set.
	usageChunk(res *result) any
	// whole is the response of a request that does not stream.
	whole(text string, lps []tokenLogprob, res *result) any
}

// base is what every response of a request repeats: the same id and
// created on every chunk.
type base struct {
	id        string
	created   int64
	model     string
	nullUsage bool // stream_options.include_usage: "usage": null on every chunk but the last, as OpenAI sends
}

func newBase(prefix, model string, p genParams) base {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base{id: prefix + hex.EncodeToString(b[:]), created: time.Now().Unix(), model: model, nullUsage: p.stream && p.includeUsage}
}

// object is a response object of the kind with its choices and usage.
func (b base) object(kind string, choices []any, u *usage) map[string]any {
	o := map[string]any{"id": b.id, "object": kind, "created": b.created, "model": b.model, "choices": choices}
	if u != nil {
		o["usage"] = u
	} else if b.nullUsage {
		o["usage"] = nil
	}
	return o
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func usageOf(r *result) *usage {
	u := &usage{PromptTokens: r.promptTokens, CompletionTokens: r.completionTokens, TotalTokens: r.promptTokens + r.completionTokens}
	u.PromptTokensDetails.CachedTokens = r.cachedTokens
	return u
}

// checkPrompt refuses a prompt that is empty, has ids outside the vocabulary
// or leaves no room in the context to generate.
func checkPrompt(param string, prompt []int, e *engine) *apiError {
	if len(prompt) == 0 {
		return badParam(param, "the prompt has no tokens")
	}
	for i, t := range prompt {
		if t < 0 || t >= e.vocab {
			return badParam(param, "token %d at index %d is outside the vocabulary of %d", t, i, e.vocab)
		}
	}
	if len(prompt) >= e.ctx {
		ae := badParam(param, "the prompt has %d tokens, the context of %d leaves no room to generate (raise --ctx)", len(prompt), e.ctx)
		ae.Code = strPtr("context_length_exceeded")
		return ae
	}
	return nil
}

// decoder checks a generation request's body and gives its prompt.
type decoder func(body []byte, e *engine) ([]int, genParams, *apiError)

// endpoint is the handler of a generation endpoint: read the body, decode
// it (an error naming the parameter), then generate; chat selects the chat
// answer and stop ids.
func (s *Server) endpoint(decode decoder, chat bool) func(http.ResponseWriter, *http.Request, *engine) {
	return func(w http.ResponseWriter, r *http.Request, e *engine) {
		body, ae := s.readBody(w, r)
		var prompt []int
		var p genParams
		if ae == nil {
			prompt, p, ae = decode(body, e)
		}
		if ae != nil {
			writeError(w, ae)
			return
		}
		if chat {
			s.generate(w, r, e, prompt, p, e.chatIDs, newChatAnswer(newBase("chatcmpl-", e.name, p), p))
			return
		}
		stop := e.stopIDs
		if p.fim {
			stop = e.fimIDs
		}
		s.generate(w, r, e, prompt, p, stop, &completionAnswer{base: newBase("cmpl-", e.name, p)})
	}
}

// generate queues the prompt and sends the answer, streamed or whole.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, e *engine, prompt []int, p genParams, stopIDs map[int]bool, ans answer) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel() // the scheduler frees the slot at its next step
	req := &request{ctx: ctx, prompt: prompt, p: p, deadline: time.Now().Add(s.cfg.Timeout), stopIDs: stopIDs, out: newOutput()}
	if p.grammar != nil {
		v, err := e.grammarVocab()
		if err != nil {
			writeError(w, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()})
			return
		}
		req.gvocab = v
	}
	if !e.sched.submit(req) {
		writeError(w, errUnavailable("every slot is busy and the queue is full; retry shortly", 1))
		return
	}
	if p.stream {
		s.stream(ctx, w, req, ans)
		return
	}
	var text strings.Builder
	var lps []tokenLogprob
	for {
		pieces, res, ok := next(ctx, req.out)
		if !ok {
			return
		}
		for _, pc := range pieces {
			text.WriteString(pc.text)
			lps = append(lps, pc.lps...)
		}
		if res == nil {
			continue
		}
		if res.err != nil {
			if ctx.Err() == nil {
				writeError(w, genError(res.err))
			}
			return
		}
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		writeJSON(w, http.StatusOK, ans.whole(text.String(), lps, res))
		return
	}
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, req *request, ans answer) {
	sw := newSSE(w, s.cfg.WriteTimeout)
	if h := ans.head(); h != nil {
		if sw.event(h) != nil {
			return
		}
	}
	for {
		pieces, res, ok := next(ctx, req.out)
		if !ok {
			return
		}
		for _, pc := range pieces {
			if emit(sw, ans.chunk(pc.text, pc.lps, "")) != nil {
				return
			}
		}
		if res == nil {
			continue
		}
		if res.err != nil {
			if ctx.Err() == nil {
				_ = sw.event(errorEvent(genError(res.err)))
			}
			return
		}
		if emit(sw, ans.chunk("", nil, res.finish)) != nil {
			return
		}
		if req.p.includeUsage && sw.event(ans.usageChunk(res)) != nil {
			return
		}
		_ = sw.done()
		return
	}
}

// emit sends a chunk: nothing for nil, each event of a list in order.
func emit(sw *sse, v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		for _, e := range x {
			if err := sw.event(e); err != nil {
				return err
			}
		}
		return nil
	}
	return sw.event(v)
}

// next waits for more of the request's output: the pieces added and the
// result once set; ok is false when the client went away.
func next(ctx context.Context, out *output) (pieces []piece, res *result, ok bool) {
	select {
	case <-out.ready:
	case <-ctx.Done():
		return nil, nil, false
	}
	pieces, res = out.take()
	return pieces, res, true
}

// genError maps a failed generation to its API error.
func genError(err error) *apiError {
	if errors.Is(err, errShutdown) {
		return errUnavailable("the server is shutting down", 5)
	}
	return errInternal(err)
}
