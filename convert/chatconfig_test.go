package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlt"
)

// TestConvertCarriesChat checks that convert stores the checkpoint's chat
// template, special-token strings and generation_config.json stop ids in the
// .mlt, and that a checkpoint without them gets no chat section.
// TestConvertStrayStopID: convert drops an eos_token_id outside the
// vocabulary with a warning naming the id and the vocabulary size, instead of
// failing.
func TestConvertStrayStopID(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen2", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	gen, _ := json.Marshal(map[string]any{"eos_token_id": []int{hfgen.EOS, 1000000}})
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), gen, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "m.mlb"), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mlt.Open(rep.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Chat == nil || !slices.Equal(tok.Chat.StopIDs, []int32{int32(hfgen.EOS)}) {
		t.Fatalf("chat %+v, want the stop ids [%d]", tok.Chat, hfgen.EOS)
	}
	want := fmt.Sprintf("eos_token_id 1000000 is not one of the tokenizer's %d ids", len(tok.Tokens))
	if !strings.Contains(log.String(), "warning: ") || !strings.Contains(log.String(), want) || !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("log %q, warnings %q: want a warning containing %q", log.String(), rep.Warnings, want)
	}
}

func TestConvertCarriesChat(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen2", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	tmpl := "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
	cfg, _ := json.Marshal(map[string]any{"chat_template": tmpl, "eos_token": "<|im_end|>", "bos_token": nil})
	gen, _ := json.Marshal(map[string]any{"eos_token_id": []int{hfgen.EOS + 2, hfgen.EOS}})
	for name, b := range map[string][]byte{"tokenizer_config.json": cfg, "generation_config.json": gen} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "m.mlb")
	rep, err := Convert(context.Background(), dir, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mlt.Open(rep.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	c := tok.Chat
	if c == nil || tok.Flags&mlt.FlagChat == 0 {
		t.Fatalf("no chat section in %s", rep.Tokenizer)
	}
	if src, ok := c.Template(""); !ok || src != tmpl || c.EOSToken != "<|im_end|>" || c.BOSToken != "" {
		t.Errorf("chat %+v: want the template, eos_token <|im_end|> and no bos_token", c)
	}
	if want := []int32{int32(hfgen.EOS + 2), int32(hfgen.EOS)}; !slices.Equal(c.StopIDs, want) {
		t.Errorf("stop ids %v, want %v (generation_config.json's order; EOS already among them)", c.StopIDs, want)
	}

	// hfgen's own tokenizer_config.json has no chat_template; config.json's
	// eos_token_id still gives stop ids.
	dir = t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	rep, err = Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "m.mlb")})
	if err != nil {
		t.Fatal(err)
	}
	if tok, err = mlt.Open(rep.Tokenizer); err != nil {
		t.Fatal(err)
	}
	if tok.Chat == nil || len(tok.Chat.Templates) != 0 || !slices.Equal(tok.Chat.StopIDs, []int32{int32(hfgen.EOS)}) {
		t.Errorf("no template: chat %+v, want a section with no template and stop id %d", tok.Chat, hfgen.EOS)
	}
}
