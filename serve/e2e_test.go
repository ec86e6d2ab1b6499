package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// openaiVersion is the official Node client the end-to-end test installs.
const openaiVersion = "openai@7.59.0"

// e2eScript uses the official client as a user would: models, chat (whole
// and streamed with usage), a completion, and three errors.
const e2eScript = `import OpenAI from 'openai';
const [base, key, model, biasJSON] = process.argv.slice(2);
const logit_bias = JSON.parse(biasJSON);
const client = new OpenAI({ baseURL: base, apiKey: key, maxRetries: 0 });
const messages = [{ role: 'user', content: 'Hello' }];
const out = {};
out.models = (await client.models.list()).data.map((m) => m.id);
const chat = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0, logit_bias });
out.chat = { content: chat.choices[0].message.content, finish: chat.choices[0].finish_reason, completion_tokens: chat.usage.completion_tokens };
const stream = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0, logit_bias,
  stream: true, stream_options: { include_usage: true } });
let text = '', finish = null, usage = null;
for await (const ch of stream) {
  if (ch.choices.length > 0) {
    text += ch.choices[0].delta.content ?? '';
    if (ch.choices[0].finish_reason) finish = ch.choices[0].finish_reason;
  }
  if (ch.usage) usage = ch.usage;
}
out.stream = { content: text, finish, completion_tokens: usage ? usage.completion_tokens : -1 };
const comp = await client.completions.create({ model, prompt: 'The lava', max_tokens: 8, temperature: 0, logit_bias });
out.completion = { content: comp.choices[0].text, finish: comp.choices[0].finish_reason, completion_tokens: comp.usage.completion_tokens };
async function fail(fn) {
  try { await fn(); return { status: 0 }; } catch (e) { return { status: e.status ?? -1, name: e.constructor.name, param: e.param ?? null }; }
}
out.notFound = await fail(() => client.chat.completions.create({ model: 'nope', messages }));
out.badParam = await fail(() => client.chat.completions.create({ model, messages, temperature: 5 }));
out.badKey = await fail(() => new OpenAI({ baseURL: base, apiKey: 'wrong', maxRetries: 0 }).models.list());
console.log(JSON.stringify(out));
`

// TestOpenAINode runs the official openai npm package against the server.
// It is skipped without node and npm, or when the package cannot be
// installed (no network).
func TestOpenAINode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no npm install")
	}
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not found", bin)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--fetch-retries=1", "--prefix", dir, openaiVersion)
	install.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (no network?): %v\n%s", openaiVersion, err, out)
	}
	script := filepath.Join(dir, "e2e.mjs")
	if err := os.WriteFile(script, []byte(e2eScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const key = "sk-krafla-e2e"
	s, url := startServer(t, Config{APIKey: key})
	e := s.eng.Load()
	if e.chat == nil {
		t.Skipf("no chat template: %v", e.chatErr)
	}
	bias := noStops(e.tok)
	// The client gets a limit of its own: npm install's minutes (under load,
	// or at -count=20) must not shorten it (it was killed at 187 s once).
	runCtx, runCancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer runCancel()
	out, err := exec.CommandContext(runCtx, "node", script, url+"/v1", key, "tiny", mustJSON(bias)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	type answer struct {
		Content          string
		Finish           string
		CompletionTokens int `json:"completion_tokens"`
	}
	type failure struct {
		Status int
		Name   string
		Param  *string
	}
	var got struct {
		Models                     []string
		Chat, Stream, Completion   answer
		NotFound, BadParam, BadKey failure
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	chatPrompt := e.tok.Encode("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", false)
	wantChat := e.tok.Decode(greedy(t, e.m, chatPrompt, 8, bias))
	wantComp := e.tok.Decode(greedy(t, e.m, e.tok.Encode("The lava", e.addBOS), 8, bias))
	if len(got.Models) != 1 || got.Models[0] != "tiny" {
		t.Errorf("models.list: %v, want [tiny]", got.Models)
	}
	for _, c := range []struct {
		name string
		got  answer
		want string
	}{{"chat", got.Chat, wantChat}, {"stream", got.Stream, wantChat}, {"completion", got.Completion, wantComp}} {
		if c.got != (answer{c.want, "length", 8}) {
			t.Errorf("%s: %+v, want %q, length, 8 tokens", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name   string
		got    failure
		status int
		class  string
		param  string
	}{
		{"unknown model", got.NotFound, 404, "NotFoundError", ""},
		{"temperature 5", got.BadParam, 400, "BadRequestError", "temperature"},
		{"wrong key", got.BadKey, 401, "AuthenticationError", ""},
	} {
		param := ""
		if c.got.Param != nil {
			param = *c.got.Param
		}
		if c.got.Status != c.status || c.got.Name != c.class || param != c.param {
			t.Errorf("%s: %+v, want status %d, %s, param %q", c.name, c.got, c.status, c.class, c.param)
		}
	}
}
