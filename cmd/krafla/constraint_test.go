package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunConstrained: run --json-schema and --grammar make the tiny
// random-weight model's output match (checked by hand); bad files are
// errors naming the rule.
func TestRunConstrained(t *testing.T) {
	model := runTestModel(t)
	dir := t.TempDir()
	schema := filepath.Join(dir, "s.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"enum":[1,2,3]}},"required":["ok","n"],"additionalProperties":false}`), 0o644)
	gbnf := filepath.Join(dir, "g.gbnf")
	os.WriteFile(gbnf, []byte(`root ::= ("yes" | "no") " " [0-9]{2}`), 0o644)
	for seed := range 3 {
		out, _, err := runCLI("run", model, "-p", "Hello", "-n", "200", "--temp", "1", "--seed", string(rune('1'+seed)), "--json-schema", schema)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
			t.Fatalf("seed %d: %q is not JSON: %v", seed, out, err)
		}
		n, _ := v["n"].(float64)
		if _, ok := v["ok"].(bool); !ok || len(v) != 2 || (n != 1 && n != 2 && n != 3) {
			t.Errorf("seed %d: %s does not match the schema", seed, out)
		}
		out, _, err = runCLI("run", model, "-p", "Hello", "-n", "50", "--temp", "1", "--seed", string(rune('1'+seed)), "--grammar", gbnf)
		if err != nil {
			t.Fatal(err)
		}
		o := strings.TrimSuffix(out, "\n")
		if len(o) < 5 || (!strings.HasPrefix(o, "yes ") && !strings.HasPrefix(o, "no ")) || strings.Trim(o[strings.IndexByte(o, ' ')+1:], "0123456789") != "" || len(o)-strings.IndexByte(o, ' ') != 3 {
			t.Errorf("seed %d: %q does not match the grammar", seed, out)
		}
	}
	os.WriteFile(gbnf, []byte("root ::= missing"), 0o644)
	if _, _, err := runCLI("run", model, "-p", "x", "--grammar", gbnf); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("bad grammar: %v", err)
	}
}

// TestChatConstrained: chat --json-schema makes every answer of a piped
// conversation (a fresh grammar each turn) JSON valid against the schema,
// checked by hand.
func TestChatConstrained(t *testing.T) {
	model := chatTestModel(t, chatMLJinja)
	schema := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`), 0o644)
	out, errOut, err := runCLIIn("Hello\nAgain\nThird\n", "chat", model, "--threads", "1", "-n", "400", "--temp", "1", "--seed", "2", "--json-schema", schema)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// The answers, one after another (the grammar lets the model indent).
	d := json.NewDecoder(strings.NewReader(out))
	for i := range 3 {
		var v map[string]any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("answer %d of %q is not JSON: %v", i, out, err)
		}
		if _, ok := v["ok"].(bool); !ok || len(v) != 1 {
			t.Errorf("answer %d %v does not match the schema", i, v)
		}
	}
	if d.More() {
		t.Errorf("%q: more than three answers", out)
	}
	if _, _, err := runCLIIn("Hi\n", "chat", model, "--json-schema", schema, "--grammar", schema); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("both flags: %v", err)
	}
}
