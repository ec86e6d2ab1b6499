package serve

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/krafla/krafla/grammar"
)

// fields is a request body decoded one level deep: each known parameter is
// decoded from its raw JSON by the accessor that checks its type and range,
// naming it on failure. Unknown parameters are ignored (clients send many).
type fields map[string]json.RawMessage

// decodeObject decodes a request body that must be a JSON object.
func decodeObject(body []byte) (fields, *apiError) {
	var f fields
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&f); err != nil {
		return nil, badRequest("the body is not a JSON object: %v", err)
	}
	if f == nil {
		return nil, badRequest("the body is not a JSON object: null")
	}
	if d.More() {
		return nil, badRequest("the body holds more than one JSON value")
	}
	return f, nil
}

// has reports whether the parameter is present and not null.
func (f fields) has(name string) bool {
	raw, ok := f[name]
	return ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decode unmarshals a present, non-null parameter into dst.
func (f fields) decode(name, want string, dst any) (bool, *apiError) {
	if !f.has(name) {
		return false, nil
	}
	if err := json.Unmarshal(f[name], dst); err != nil {
		return false, badParam(name, "must be %s", want)
	}
	return true, nil
}

func (f fields) str(name string, dst *string) (bool, *apiError) {
	return f.decode(name, "a string", dst)
}

func (f fields) boolean(name string, dst *bool) (bool, *apiError) {
	return f.decode(name, "true or false", dst)
}

// integer decodes an integer parameter in lo … hi.
func (f fields) integer(name string, dst *int, lo, hi int) (bool, *apiError) {
	var v int64
	ok, e := f.decode(name, "an integer", &v)
	if !ok {
		return false, e
	}
	if v < int64(lo) || v > int64(hi) {
		return false, badParam(name, "%d is outside %d … %d", v, lo, hi)
	}
	*dst = int(v)
	return true, nil
}

// number decodes a number parameter in lo … hi.
func (f fields) number(name string, dst *float64, lo, hi float64) (bool, *apiError) {
	var v float64
	ok, e := f.decode(name, "a number", &v)
	if !ok {
		return false, e
	}
	if !(v >= lo && v <= hi) {
		return false, badParam(name, "%v is outside %v … %v", v, lo, hi)
	}
	*dst = v
	return true, nil
}

// genParams are the sampling and output parameters both endpoints share.
type genParams struct {
	model        string
	maxTokens    int // 0: up to the context
	temperature  float64
	topP, minP   float64
	topK         int
	seed         uint64
	seeded       bool
	stop         []string
	presence     float64
	frequency    float64
	logprobs     bool
	topLogprobs  int
	stream       bool
	includeUsage bool
	logitBias    map[int]float32
	grammar      *grammar.Grammar // response_format; nil: free text
	trigger      string           // with grammar: it applies from the first trigger on (tool_choice auto); "": from the start
	toolFormat   string           // chat: the template's tool-call format, when tools are given
	think        bool             // chat: split <think> reasoning off the content
	thinkOpen    bool             // chat: the prompt opened <think>
	noParallel   bool             // parallel_tool_calls: false
	fim          bool             // a fill-in-the-middle prompt (suffix): the infill stop ids end it
	// ollama's repeat_penalty over the last repeatLastN tokens (prompt
	// included; -1: the whole context), as llama.cpp applies it: a
	// positive logit divided by it, a negative one multiplied. 0 or 1: off.
	repeatPenalty float64
	repeatLastN   int
}

// maxStop is OpenAI's limit on stop sequences; maxStopBytes bounds each one.
const (
	maxStop      = 4
	maxStopBytes = 256
)

// parseGen decodes the shared parameters. chat selects the chat endpoint's
// logprobs (a bool with top_logprobs 0 … 20) over the legacy one (an integer
// 0 … 5, the number of alternatives).
func parseGen(f fields, vocab int, chat bool) (genParams, *apiError) {
	p := genParams{temperature: 1, topP: 1}
	var e *apiError
	try := func(_ bool, err *apiError) {
		if e == nil {
			e = err
		}
	}
	ok, err := f.str("model", &p.model)
	try(ok, err)
	if e == nil && !ok {
		return p, badParam("model", "required: the model id that /v1/models lists")
	}
	try(f.integer("max_tokens", &p.maxTokens, 1, math.MaxInt32))
	try(f.integer("max_completion_tokens", &p.maxTokens, 1, math.MaxInt32))
	try(f.number("temperature", &p.temperature, 0, 2))
	try(f.number("top_p", &p.topP, 0, 1))
	try(f.number("min_p", &p.minP, 0, 1))
	try(f.integer("top_k", &p.topK, 0, math.MaxInt32))
	try(f.number("presence_penalty", &p.presence, -2, 2))
	try(f.number("frequency_penalty", &p.frequency, -2, 2))
	var seed int64
	if ok, err := f.decode("seed", "an integer", &seed); err != nil {
		try(false, err)
	} else if ok {
		p.seed, p.seeded = uint64(seed), true
	}
	n := 1
	try(f.integer("n", &n, 1, math.MaxInt32))
	if e == nil && n != 1 {
		e = badParam("n", "only 1 is supported (one choice per request)")
	}
	try(f.boolean("stream", &p.stream))
	if e == nil && f.has("stream_options") {
		var so map[string]json.RawMessage
		if err := json.Unmarshal(f["stream_options"], &so); err != nil {
			e = badParam("stream_options", "must be an object")
		} else {
			try(fields(so).boolean("include_usage", &p.includeUsage))
			if e != nil {
				e.Param = strPtr("stream_options.include_usage")
			}
		}
	}
	if e == nil {
		p.stop, e = parseStop(f)
	}
	if e == nil {
		e = parseLogprobs(f, &p, chat)
	}
	if e == nil {
		p.logitBias, e = parseLogitBias(f, vocab)
	}
	return p, e
}

func parseStop(f fields) ([]string, *apiError) {
	if !f.has("stop") {
		return nil, nil
	}
	var one string
	var list []string
	if json.Unmarshal(f["stop"], &one) == nil {
		list = []string{one}
	} else if err := json.Unmarshal(f["stop"], &list); err != nil {
		return nil, badParam("stop", "must be a string or an array of strings")
	}
	if len(list) > maxStop {
		return nil, badParam("stop", "%d sequences, at most %d", len(list), maxStop)
	}
	var out []string
	for _, s := range list {
		if len(s) > maxStopBytes {
			return nil, badParam("stop", "a sequence of %d bytes, at most %d", len(s), maxStopBytes)
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func parseLogprobs(f fields, p *genParams, chat bool) *apiError {
	if !chat {
		ok, e := f.integer("logprobs", &p.topLogprobs, 0, 5)
		p.logprobs = ok
		return e
	}
	if _, e := f.boolean("logprobs", &p.logprobs); e != nil {
		return e
	}
	ok, e := f.integer("top_logprobs", &p.topLogprobs, 0, 20)
	if e != nil {
		return e
	}
	if ok && !p.logprobs && p.topLogprobs > 0 {
		return badParam("top_logprobs", "needs logprobs: true")
	}
	return nil
}

// parseLogitBias decodes {"token id": bias}, bias in −100 … 100.
func parseLogitBias(f fields, vocab int) (map[int]float32, *apiError) {
	if !f.has("logit_bias") {
		return nil, nil
	}
	var m map[string]float64
	if err := json.Unmarshal(f["logit_bias"], &m); err != nil {
		return nil, badParam("logit_bias", "must be an object of token ids to numbers")
	}
	out := make(map[int]float32, len(m))
	for k, v := range m {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id >= vocab {
			return nil, badParam("logit_bias", "key %q is not a token id below %d", k, vocab)
		}
		if !(v >= -100 && v <= 100) {
			return nil, badParam("logit_bias", "token %d: bias %v outside -100 … 100", id, v)
		}
		out[id] = float32(v)
	}
	return out, nil
}

// parsePrompt decodes a completion prompt: a string, an array of token ids,
// or an array holding one of those (several prompts would be several choices).
func parsePrompt(f fields) (text string, ids []int, e *apiError) {
	if !f.has("prompt") {
		return "", nil, badParam("prompt", "required")
	}
	raw := f["prompt"]
	if json.Unmarshal(raw, &text) == nil {
		return text, nil, nil
	}
	if json.Unmarshal(raw, &ids) == nil {
		if len(ids) == 0 {
			return "", nil, badParam("prompt", "an empty array of tokens")
		}
		return "", ids, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) == 1 {
		if json.Unmarshal(list[0], &text) == nil {
			return text, nil, nil
		}
		if json.Unmarshal(list[0], &ids) == nil && len(ids) > 0 {
			return "", ids, nil
		}
	}
	if len(list) > 1 {
		return "", nil, badParam("prompt", "%d prompts: only one per request is supported", len(list))
	}
	return "", nil, badParam("prompt", "must be a string, an array of token ids, or an array holding one of those")
}
