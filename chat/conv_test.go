package chat

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/jinja"
	"github.com/krafla/krafla/mlt"
)

// chatML renders messages the way the ChatML templates (Qwen's) do, in Go,
// so that the conversation logic is tested apart from the Jinja engine.
type chatML struct{}

func (chatML) render(vars map[string]any, _ time.Time) (string, error) {
	var b strings.Builder
	for _, m := range vars["messages"].([]any) {
		role, _ := m.(*jinja.Dict).Get("role")
		content, _ := m.(*jinja.Dict).Get("content")
		fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", role, content)
	}
	if vars["add_generation_prompt"].(bool) {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String(), nil
}

// tinyChatModel converts a synthetic checkpoint of arch with hfgen's
// tokenizer, which has the ChatML tokens <|im_start|> and <|im_end|>.
func tinyChatModel(t *testing.T, arch string) (*infer.Model, *mlt.Tokenizer) {
	t.Helper()
	dir := t.TempDir()
	if err := hfgen.Write(filepath.Join(dir, "hf"), arch, hfgen.Options{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.mlb")
	rep, err := convert.Convert(context.Background(), filepath.Join(dir, "hf"), convert.Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	m, err := infer.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := mlt.Open(rep.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}

func chatMLTemplate(t *testing.T, tok *mlt.Tokenizer) *Template {
	t.Helper()
	end, ok := tok.Lookup("<|im_end|>")
	if !ok {
		t.Fatal("no <|im_end|> token")
	}
	return &Template{Name: "chatml", r: chatML{}, stops: []int{end}}
}

func newConv(t *testing.T, m *infer.Model, tok *mlt.Tokenizer, ctx int, so infer.SamplerOptions, maxTokens int) *Conversation {
	t.Helper()
	s, err := m.NewSession(infer.SessionOptions{Ctx: ctx, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return NewConversation(Options{Template: chatMLTemplate(t, tok), Tokenizer: tok, Session: s, Sampling: so, MaxTokens: maxTokens})
}

// TestReplyMatchesFreshSession holds a conversation and checks every answer
// against a fresh session fed the whole rendered conversation: the same
// tokens (sampled, with a repetition penalty), and after the last turn the
// same logits bit for bit. Attention models reuse the cache; the linear
// layers of qwen3_5 can only continue from the end of it.
func TestReplyMatchesFreshSession(t *testing.T) {
	so := infer.SamplerOptions{Temp: 0.9, TopK: 20, TopP: 0.95, RepeatPenalty: 1.1, RepeatLastN: 16, Seed: 11}
	for _, arch := range []string{"qwen2", "qwen3_5", "gemma3"} {
		t.Run(arch, func(t *testing.T) {
			m, tok := tinyChatModel(t, arch)
			c := newConv(t, m, tok, 0, so, 12)
			c.System = "You answer the lava questions."
			fresh, err := m.NewSession(infer.SessionOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			reused := 0
			for i, user := range []string{"Hello there", "the lava flows under the ice", "and the fire?"} {
				prev := slices.Clone(c.Cached())
				r, err := c.Reply(context.Background(), user, nil)
				if err != nil {
					t.Fatal(err)
				}
				// The conversation as a fresh session sees it.
				c.Turns = c.Turns[:len(c.Turns)-1]
				ids, err := c.render(true)
				c.Turns = append(c.Turns, Message{"assistant", r.Text})
				if err != nil {
					t.Fatal(err)
				}
				if r.PromptTokens != len(ids) || r.Reused > len(prev) || !slices.Equal(ids[:r.Reused], prev[:r.Reused]) {
					t.Fatalf("turn %d: reused %d of %d tokens, not a prefix of the %d cached", i, r.Reused, len(ids), len(prev))
				}
				fs := so
				fs.Seed += uint64(i)
				fresh.Reset()
				want, err := infer.Generate(context.Background(), fresh, ids, infer.GenerateOptions{MaxTokens: 12, Stop: c.opt.Template.StopIDs(), Sampler: infer.NewSampler(fs)}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.Tokens, want.Tokens) || r.Reason != want.Reason {
					t.Fatalf("turn %d: answer %v (%v), a fresh session gives %v (%v)", i, r.Tokens, r.Reason, want.Tokens, want.Reason)
				}
				if i > 0 {
					reused += r.Reused
				}
			}
			if reused == 0 && arch != "qwen3_5" {
				t.Errorf("turns 2 and 3 reused no cached token")
			}
			// The caches hold the same state: one more token, same bits.
			cached := c.Cached()
			if c.opt.Session.Pos() != len(cached) {
				t.Fatalf("session at %d, %d tokens cached", c.opt.Session.Pos(), len(cached))
			}
			probe := []int{42}
			a := lastLogits(t, c.opt.Session, probe)
			fresh.Reset()
			b := lastLogits(t, fresh, append(slices.Clone(cached), probe...))
			for j := range a {
				if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
					t.Fatalf("logit %d after %d cached tokens: %v, fresh session %v", j, len(cached), a[j], b[j])
				}
			}
		})
	}
}

func lastLogits(t *testing.T, s *infer.Session, ids []int) []float32 {
	t.Helper()
	var out []float32
	if err := s.Eval(ids, false, func(_ int, l []float32) error { out = slices.Clone(l); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplyDropsOldestTurns fills a small context: the oldest turns go, the
// system message stays, and the answer still comes.
func TestReplyDropsOldestTurns(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 160, infer.SamplerOptions{}, 8)
	c.System = "sys"
	long := strings.Repeat("lava ", 6)
	dropped := 0
	for i := range 6 {
		r, err := c.Reply(context.Background(), fmt.Sprintf("%d %s", i, long), nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		dropped += r.Dropped
		if r.PromptTokens+8 > 160 {
			t.Fatalf("turn %d: prompt of %d tokens leaves no room for 8", i, r.PromptTokens)
		}
	}
	ms := c.Messages()
	if dropped == 0 || ms[0] != (Message{"system", "sys"}) || ms[1].Role != "user" || !strings.HasPrefix(ms[len(ms)-2].Content, "5 ") {
		t.Errorf("dropped %d; messages %q: want the system message, then whole turns ending with turn 5", dropped, ms)
	}
	if _, err := c.Reply(context.Background(), strings.Repeat("lava ", 200), nil); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a message longer than the context: got %v, want ErrTooLong", err)
	}
	if last := c.Turns[len(c.Turns)-1]; last.Role != "assistant" {
		t.Errorf("the refused message stayed in the conversation: %q", last)
	}
}

func TestReplyCancelled(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 0, infer.SamplerOptions{}, -1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := c.Reply(ctx, "hi", nil)
	if err != nil || r.Reason != infer.StopCancel || len(c.Turns) != 0 {
		t.Errorf("cancelled before the first token: %v, reason %v, turns %q: want no turn kept", err, r.Reason, c.Turns)
	}
	ctx, cancel = context.WithCancel(context.Background())
	n := 0
	r, err = c.Reply(ctx, "hi", func(string) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if err != nil || r.Reason != infer.StopCancel || len(r.Tokens) != 3 || len(c.Turns) != 2 || c.Turns[1].Content != r.Text {
		t.Errorf("cancelled after 3 tokens: %v, reason %v, %d tokens, turns %q", err, r.Reason, len(r.Tokens), c.Turns)
	}
}

func TestSaveLoad(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 0, infer.SamplerOptions{}, 4)
	c.System = "be brief"
	if _, err := c.Reply(context.Background(), "Þú ☃ \"quoted\"\nline", nil); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "conv.json")
	if err := c.Save(p); err != nil {
		t.Fatal(err)
	}
	d := newConv(t, m, tok, 0, infer.SamplerOptions{}, 4)
	if err := d.Load(p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Messages(), c.Messages()) {
		t.Errorf("loaded %q, saved %q", d.Messages(), c.Messages())
	}
	for _, tc := range []struct{ body, want string }{
		{`[1]`, "not a conversation"},
		{`{"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]}`, `message 1: role "system"`},
	} {
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Load(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load %s: got %v, want %q", tc.body, err, tc.want)
		}
	}
}
