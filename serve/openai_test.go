package serve

import (
	"encoding/json"
	"github.com/krafla/krafla/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOpenAIClient: the official openai npm client (testenv.OpenAI: the
// version scripts/test.sh installs; the test skips without node or it) drives the server as agent apps do: chat.completions.parse()
// with a strict json_schema, .stream() with a required tool call,
// runTools() with a named tool and the tool's result sent back. The tiny
// random-weight model answers; what the client parsed is checked by hand.
func TestOpenAIClient(t *testing.T) {
	dir := testenv.OpenAI(t)
	script, err := os.ReadFile(filepath.Join("testdata", "openai_agents.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := filepath.Join(t.TempDir(), "hermes.jinja")
	os.WriteFile(tpl, []byte("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if tools %}Tools: call them as <tool_call>{json}</tool_call>\n{% endif %}<|im_start|>assistant\n"), 0o644)
	_, url := startServer(t, Config{TemplateFile: tpl})
	cmd := exec.Command("node", "--input-type=module", "-e", string(script), "--", url+"/v1", "tiny")
	cmd.Dir = dir // where "openai" resolves
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var r struct {
		Parsed       map[string]any
		ParsedFinish string
		StreamChunks int
		StreamFinish string
		StreamCalls  []struct {
			Name string
			Args map[string]any
		}
		RunToolsCalls   []map[string]any
		RunToolsRoles   []string
		AfterToolFinish string
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	t.Logf("client report: %s", out)
	n, _ := r.Parsed["n"].(float64)
	if _, ok := r.Parsed["ok"].(bool); !ok || len(r.Parsed) != 2 || n < 1 || n > 3 || n != float64(int(n)) || r.ParsedFinish != "stop" {
		t.Errorf("parse(): parsed %v (finish %s), want {ok: bool, n: 1..3}", r.Parsed, r.ParsedFinish)
	}
	if len(r.StreamCalls) != 1 || r.StreamCalls[0].Name != "pick" || r.StreamFinish != "tool_calls" || r.StreamChunks < 2 {
		t.Errorf("stream(): calls %+v, finish %s, %d chunks; want one call of pick", r.StreamCalls, r.StreamFinish, r.StreamChunks)
	} else if v, ok := r.StreamCalls[0].Args["n"].(float64); !ok || len(r.StreamCalls[0].Args) != 1 || v < 0 || v > 9 {
		t.Errorf("stream(): arguments %v", r.StreamCalls[0].Args)
	}
	if len(r.RunToolsCalls) != 1 || len(r.RunToolsRoles) != 3 || r.RunToolsRoles[1] != "assistant" || r.RunToolsRoles[2] != "tool" {
		t.Errorf("runTools(): tool called with %v, messages %v; want one call, then user, assistant, tool", r.RunToolsCalls, r.RunToolsRoles)
	}
	if r.AfterToolFinish != "stop" && r.AfterToolFinish != "length" {
		t.Errorf("the turn after the tool's result: finish %q", r.AfterToolFinish)
	}
}
