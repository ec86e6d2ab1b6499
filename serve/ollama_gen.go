package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/grammar"
)

// ollamaReq is a checked /api/chat or /api/generate request.
type ollamaReq struct {
	name   string
	p      genParams
	prompt []int
	load   bool // no messages, or an empty prompt: only load the model (or unload it: keep_alive 0)
	unload bool
	numCtx int // options.num_ctx when below the slot's context: the prompt and answer fit in it
}

// maxOllamaStop bounds options.stop (ollama sets no limit; OpenAI's is 4).
const maxOllamaStop = 16

// ollamaOptions decodes "options" onto ollama's defaults (its
// api.DefaultOptions: temperature 0.8, top_k 40, top_p 0.9, repeat_penalty
// 1.1 over the last 64 tokens). Options that tune ollama's runner
// (num_thread, num_gpu, use_mmap, …) are ignored, as unknown parameters
// are on the OpenAI side.
func ollamaOptions(f fields, q *ollamaReq) *apiError {
	p := &q.p
	p.temperature, p.topK, p.topP, p.minP, p.repeatPenalty, p.repeatLastN = 0.8, 40, 0.9, 0, 1.1, 64
	if !f.has("options") {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(f["options"], &raw); err != nil || raw == nil {
		return badParam("options", "must be an object")
	}
	o := fields(raw)
	var e *apiError
	try := func(_ bool, err *apiError) {
		if e == nil && err != nil {
			e = err
		}
	}
	try(o.number("temperature", &p.temperature, 0, 100))
	try(o.number("top_p", &p.topP, 0, 1))
	try(o.number("min_p", &p.minP, 0, 1))
	try(o.integer("top_k", &p.topK, 0, math.MaxInt32))
	try(o.number("presence_penalty", &p.presence, -2, 2))
	try(o.number("frequency_penalty", &p.frequency, -2, 2))
	try(o.number("repeat_penalty", &p.repeatPenalty, 0, 100))
	try(o.integer("repeat_last_n", &p.repeatLastN, -1, math.MaxInt32))
	var seed int64
	if ok, err := o.decode("seed", "an integer", &seed); err != nil {
		try(false, err)
	} else if ok && seed >= 0 {
		p.seed, p.seeded = uint64(seed), true
	}
	n := 0
	if ok, err := o.integer("num_predict", &n, -2, math.MaxInt32); err != nil {
		try(false, err)
	} else if ok && n > 0 {
		p.maxTokens = n // -1 (no limit), -2 (fill the context), 0: up to the context
	}
	try(o.integer("num_ctx", &q.numCtx, 1, math.MaxInt32))
	if e == nil && o.has("stop") {
		var one string
		var list []string
		if json.Unmarshal(o["stop"], &one) == nil {
			list = []string{one}
		} else if json.Unmarshal(o["stop"], &list) != nil {
			e = badParam("stop", "must be a string or an array of strings")
		}
		if e == nil && len(list) > maxOllamaStop {
			e = badParam("stop", "%d sequences, at most %d", len(list), maxOllamaStop)
		}
		for _, s := range list {
			if e == nil && len(s) > maxStopBytes {
				e = badParam("stop", "a sequence of %d bytes, at most %d", len(s), maxStopBytes)
			}
			if s != "" {
				p.stop = append(p.stop, s)
			}
		}
	}
	if e != nil && e.Param != nil {
		e.Message = "options." + e.Message
		e.Param = strPtr("options." + *e.Param)
	}
	return e
}

// ollamaFormat compiles "format": "json" (any JSON object) or a JSON
// schema (an object), onto the grammar that response_format uses.
func ollamaFormat(f fields) (*grammar.Grammar, *apiError) {
	if !f.has("format") {
		return nil, nil
	}
	raw := bytes.TrimSpace(f["format"])
	var str string
	if json.Unmarshal(raw, &str) == nil {
		switch str {
		case "":
			return nil, nil
		case "json":
			g, err := grammar.CompileJSONObject()
			if err != nil {
				return nil, badParam("format", "%v", err)
			}
			return g, nil
		}
		return nil, badParam("format", "must be \"json\" or a JSON schema object, not %s", quote(str))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, badParam("format", "must be \"json\" or a JSON schema object")
	}
	g, err := grammar.CompileJSONSchema(raw)
	if err != nil {
		return nil, badParam("format", "%v", err)
	}
	return g, nil
}

// ollamaThink decodes "think": true or false, or a level ("high",
// "medium", "low") that the template reads as reasoning_effort.
func ollamaThink(f fields) (set, on bool, level string, e *apiError) {
	if !f.has("think") {
		return false, false, "", nil
	}
	if json.Unmarshal(f["think"], &on) == nil {
		return true, on, "", nil
	}
	if json.Unmarshal(f["think"], &level) == nil && (level == "high" || level == "medium" || level == "low") {
		return true, true, level, nil
	}
	return false, false, "", badParam("think", "must be true, false, \"high\", \"medium\" or \"low\"")
}

// decodeOllama checks a /api/chat (chat) or /api/generate request and
// renders its prompt.
func (s *Server) decodeOllama(body []byte, e *engine, isChat bool) (*ollamaReq, *apiError) {
	f, ae := decodeObject(body)
	if ae != nil {
		return nil, ae
	}
	q := &ollamaReq{}
	if q.name, ae = nameField(f); ae != nil {
		return nil, ae
	}
	if s.reg == nil && !nameMatches(s.cfg.Name, q.name) {
		return nil, errModelNotFound(q.name)
	}
	q.p.model = q.name
	q.p.stream = true
	if _, ae = f.boolean("stream", &q.p.stream); ae != nil {
		return nil, ae
	}
	keep, ae := keepAlive(f)
	if ae != nil {
		return nil, ae
	}
	q.unload = keep != nil && *keep == 0
	if ae = ollamaOptions(f, q); ae != nil {
		return nil, ae
	}
	if q.p.grammar, ae = ollamaFormat(f); ae != nil {
		return nil, ae
	}
	thinkSet, think, level, ae := ollamaThink(f)
	if ae != nil {
		return nil, ae
	}
	if hasImages(f) {
		return nil, badParam("images", "not supported: krafla serves text models")
	}
	// The chat template's input: the messages, or the system and prompt.
	msgs := f["messages"]
	if isChat {
		var list []map[string]json.RawMessage
		if f.has("messages") {
			if err := json.Unmarshal(msgs, &list); err != nil {
				return nil, badParam("messages", "must be an array of message objects")
			}
		}
		if len(list) == 0 {
			q.load = true
			return q, nil
		}
		for i, m := range list {
			if hasImages(fields(m)) {
				return nil, badParam(fmt.Sprintf("messages[%d].images", i), "not supported: krafla serves text models")
			}
			var c string
			if fields(m).has("content") && json.Unmarshal(m["content"], &c) != nil {
				return nil, badParam(fmt.Sprintf("messages[%d].content", i), "must be a string")
			}
		}
	} else {
		var prompt, system, suffix, tmpl string
		var raw bool
		for _, d := range []struct {
			name string
			dst  *string
		}{{"prompt", &prompt}, {"system", &system}, {"suffix", &suffix}, {"template", &tmpl}} {
			if _, ae := f.str(d.name, d.dst); ae != nil {
				return nil, ae
			}
		}
		if _, ae := f.boolean("raw", &raw); ae != nil {
			return nil, ae
		}
		if f.has("context") {
			return nil, badParam("context", "not supported (ollama deprecated it): send the conversation as /api/chat messages")
		}
		if prompt == "" && suffix == "" {
			q.load = true
			return q, nil
		}
		if suffix != "" && (tmpl == "" || raw) {
			return q, s.fimPrompt(q, e, prompt, suffix, system, thinkSet && think)
		}
		if tmpl != "" && !raw {
			// ollama's Go template in place of the model's chat template.
			if thinkSet && think {
				return nil, badParam("think", "cannot be combined with a template override")
			}
			if suffix != "" && !strings.Contains(tmpl, ".Suffix") {
				return nil, badParam("suffix", "the template override has no .Suffix to place it in")
			}
			text, ae := renderOllamaTemplate(tmpl, system, prompt, suffix)
			if ae != nil {
				return nil, ae
			}
			q.p.fim = suffix != "" && e.fim != nil // the infill stops end it
			q.prompt = chat.Encode(e.tok, text)
			return q, s.checkOllamaPrompt(q, "template", e)
		}
		if raw || e.chat == nil {
			if system != "" {
				return nil, badParam("system", "this model has no chat template to place a system prompt in (or raw is true): put it in the prompt")
			}
			if thinkSet && think {
				return nil, badParam("think", "model %s does not support thinking", quote(q.name))
			}
			q.prompt = e.tok.EncodePrompt(prompt)
			q.p.thinkOpen = false
			return q, s.checkOllamaPrompt(q, "prompt", e)
		}
		var list []map[string]string
		if system != "" {
			list = append(list, map[string]string{"role": "system", "content": system})
		}
		list = append(list, map[string]string{"role": "user", "content": prompt})
		msgs, _ = json.Marshal(list)
	}
	if e.chat == nil {
		return nil, badParam("messages", "this model has no usable chat template (%v); use /api/generate with raw: true", e.chatErr)
	}
	cf := fields{"messages": msgs}
	if f.has("tools") {
		cf["tools"] = f["tools"]
	}
	if thinkSet {
		kw := map[string]any{"enable_thinking": think}
		if level != "" {
			kw["reasoning_effort"] = level
		}
		cf["chat_template_kwargs"], _ = json.Marshal(kw)
	}
	prompt, ae := s.chatPrompt(cf, e, &q.p)
	if ae != nil {
		return nil, ae
	}
	if thinkSet && think && !q.p.think {
		return nil, badParam("think", "model %s does not support thinking", quote(q.name))
	}
	q.prompt = prompt
	return q, s.checkOllamaPrompt(q, "messages", e)
}

// fimPrompt builds /api/generate's fill-in-the-middle prompt: prompt is the
// text before the insertion, suffix the text after it, in the sentinels of
// the tokenizer (fimTokens), without the chat template (ollama's code model
// templates give the same layout under {{ if .Suffix }}).
func (s *Server) fimPrompt(q *ollamaReq, e *engine, prompt, suffix, system string, think bool) *apiError {
	if e.fim == nil {
		return errNoFIM(q.name)
	}
	if system != "" {
		return badParam("system", "cannot be combined with suffix: a fill-in-the-middle prompt has no place for it")
	}
	if think {
		return badParam("think", "cannot be combined with suffix")
	}
	ctx := e.ctx
	if q.numCtx > 0 && q.numCtx < ctx {
		ctx = q.numCtx
	}
	q.prompt = fimTokens(e, prompt, suffix, ctx, q.p.maxTokens)
	q.p.fim = true
	q.p.thinkOpen = false
	return s.checkOllamaPrompt(q, "prompt", e)
}

// hasImages reports whether images holds anything but null or [] (some
// clients send an empty list with every message).
func hasImages(f fields) bool {
	if !f.has("images") {
		return false
	}
	var list []json.RawMessage
	return json.Unmarshal(f["images"], &list) != nil || len(list) > 0
}

// checkOllamaPrompt checks the prompt against the context, and against
// options.num_ctx when that is smaller (the answer then stops at it).
func (s *Server) checkOllamaPrompt(q *ollamaReq, param string, e *engine) *apiError {
	if ae := checkPrompt(param, q.prompt, e); ae != nil {
		return ae
	}
	if q.numCtx > 0 && q.numCtx < e.ctx {
		if len(q.prompt) >= q.numCtx {
			return badParam("options.num_ctx", "the prompt has %d tokens, num_ctx %d leaves no room to generate", len(q.prompt), q.numCtx)
		}
		if room := q.numCtx - len(q.prompt); q.p.maxTokens == 0 || q.p.maxTokens > room {
			q.p.maxTokens = room
		}
	}
	return nil
}

// ollamaChat serves POST /api/chat.
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request, e *engine) {
	s.ollamaGen(w, r, e, true)
}

// ollamaGenerate serves POST /api/generate.
func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request, e *engine) {
	s.ollamaGen(w, r, e, false)
}

func (s *Server) ollamaGen(w http.ResponseWriter, r *http.Request, e *engine, isChat bool) {
	t0 := time.Now()
	body, ae := s.readBody(w, r)
	var q *ollamaReq
	if ae == nil {
		q, ae = s.decodeOllama(body, e, isChat)
	}
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	out := &ollamaAnswer{chat: isChat, model: q.name, t0: t0, load: loadDuration(r)}
	if q.load {
		// ollama's way to load a model (or, with keep_alive 0, unload it:
		// the dispatcher does that once this request lets the model go).
		reason := "load"
		if q.unload {
			reason = "unload"
		}
		o := out.object(true)
		o["done_reason"] = reason
		if isChat {
			o["message"] = map[string]any{"role": "assistant", "content": ""}
		} else {
			o["response"] = ""
		}
		writeJSON(w, http.StatusOK, o)
		return
	}
	if q.p.toolFormat != "" || q.p.think {
		out.st = &structured{format: q.p.toolFormat, thinkOpen: q.p.thinkOpen, parallel: true}
	}
	stopIDs := e.chatIDs
	if !isChat && e.chat == nil {
		stopIDs = e.stopIDs
	}
	if q.p.fim {
		stopIDs = e.fimIDs
	}
	req := &request{ctx: r.Context(), prompt: q.prompt, p: q.p, deadline: time.Now().Add(s.cfg.Timeout), stopIDs: stopIDs, out: newOutput()}
	if q.p.grammar != nil {
		v, err := e.grammarVocab()
		if err != nil {
			writeOllamaError(w, errInternal(err))
			return
		}
		req.gvocab = v
	}
	if !e.sched.submit(req) {
		writeOllamaError(w, errUnavailable("every slot is busy and the queue is full; retry shortly", 1))
		return
	}
	var nd *ndjson
	if q.p.stream {
		nd = newNDJSON(w, s.cfg.WriteTimeout)
	}
	var all strings.Builder
	for {
		pieces, res, ok := next(r.Context(), req.out)
		if !ok {
			return // the client went away; the scheduler frees the slot
		}
		for _, pc := range pieces {
			if pc.text == "" {
				continue
			}
			out.first()
			if nd == nil {
				all.WriteString(pc.text)
				continue
			}
			content, thinking := pc.text, ""
			if out.st != nil {
				thinking, content = out.st.delta(pc.text)
			}
			if content == "" && thinking == "" {
				continue
			}
			if nd.line(out.chunk(content, thinking, nil)) != nil {
				return
			}
		}
		if res == nil {
			continue
		}
		if res.err != nil {
			if r.Context().Err() != nil {
				return
			}
			ae := genError(res.err)
			if nd == nil {
				writeOllamaError(w, ae)
			} else {
				_ = nd.line(map[string]string{"error": ae.Message})
			}
			return
		}
		out.end = time.Now()
		if nd == nil {
			content, thinking := all.String(), ""
			var calls []chat.ToolCall
			if out.st != nil {
				out.st.acc.WriteString(content)
				m, _, _ := out.st.final()
				content, thinking, calls = m.Content, m.Reasoning, m.ToolCalls
			}
			o := out.chunk(content, thinking, calls)
			out.done(o, res)
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
			writeJSON(w, http.StatusOK, o)
			return
		}
		if out.st != nil {
			m, restR, restC := out.st.final()
			if restR != "" || restC != "" || len(m.ToolCalls) > 0 {
				if nd.line(out.chunk(restC, restR, m.ToolCalls)) != nil {
					return
				}
			}
		}
		o := out.chunk("", "", nil)
		out.done(o, res)
		_ = nd.line(o)
		return
	}
}

// ollamaAnswer formats the objects of a /api/chat or /api/generate answer.
type ollamaAnswer struct {
	chat  bool
	model string
	st    *structured // tool calls and reasoning split off; nil: all content
	t0    time.Time   // the request arrived
	load  time.Duration
	tok1  time.Time // the first text came (the prompt was evaluated)
	end   time.Time
}

func (a *ollamaAnswer) first() {
	if a.tok1.IsZero() {
		a.tok1 = time.Now()
	}
}

func (a *ollamaAnswer) object(done bool) map[string]any {
	return map[string]any{"model": a.model, "created_at": ollamaTime(time.Now()), "done": done}
}

// chunk is an answer object with text (and, at the end, tool calls).
func (a *ollamaAnswer) chunk(content, thinking string, calls []chat.ToolCall) map[string]any {
	o := a.object(false)
	if !a.chat {
		o["response"] = content
		if thinking != "" {
			o["thinking"] = thinking
		}
		return o
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if thinking != "" {
		msg["thinking"] = thinking
	}
	if len(calls) > 0 {
		list := make([]any, len(calls))
		for i, c := range calls {
			args := json.RawMessage(c.Arguments)
			if !json.Valid(args) || len(bytes.TrimSpace(args)) == 0 || bytes.TrimSpace(args)[0] != '{' {
				args = json.RawMessage("{}")
			}
			list[i] = map[string]any{"function": map[string]any{"index": i, "name": c.Name, "arguments": args}}
		}
		msg["tool_calls"] = list
	}
	o["message"] = msg
	return o
}

// done marks o as the last object, with ollama's counts and durations (in
// nanoseconds).
func (a *ollamaAnswer) done(o map[string]any, res *result) {
	if a.tok1.IsZero() {
		a.tok1 = a.end
	}
	o["done"] = true
	o["done_reason"] = res.finish
	o["total_duration"] = a.end.Sub(a.t0).Nanoseconds() + a.load.Nanoseconds()
	o["load_duration"] = a.load.Nanoseconds()
	o["prompt_eval_count"] = res.promptTokens
	o["prompt_eval_duration"] = a.tok1.Sub(a.t0).Nanoseconds()
	o["eval_count"] = res.completionTokens
	o["eval_duration"] = a.end.Sub(a.tok1).Nanoseconds()
}
