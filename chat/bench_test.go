package chat

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/cputime"
	"github.com/krafla/krafla/mlt"
)

// benchChatML is a ChatML template in Jinja.
const benchChatML = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// BenchmarkTurn2 measures the prefill of a conversation's second turn (a
// system message and a first exchange, 566 tokens, then a user message: 691
// tokens in all, 125 of them new) on a converted stories15m-shaped checkpoint (dim 288,
// 6 layers): "reuse" is Reply with the first turn's cache kept, "refill" a
// fresh session evaluating the whole conversation, as without the cache.
// Turn 2 generates nothing: ns/op is its prefill (with the rendering and
// encoding for reuse); cpu-ms/op, the process's CPU time with one thread,
// is what to compare on a loaded machine.
//
//	go test ./chat -run '^$' -bench Turn2 -benchtime 20x
func BenchmarkTurn2(b *testing.B) {
	dir := b.TempDir()
	if err := hfgen.Write(filepath.Join(dir, "hf"), "llama", hfgen.Options{Shape: "stories15m", Seed: 2,
		Config: map[string]any{"max_position_embeddings": 1024}}); err != nil {
		b.Fatal(err)
	}
	rep, err := convert.Convert(context.Background(), filepath.Join(dir, "hf"), convert.Options{Out: filepath.Join(dir, "m.mlb")})
	if err != nil {
		b.Fatal(err)
	}
	m, err := infer.Open(filepath.Join(dir, "m.mlb"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	tok, err := mlt.Open(rep.Tokenizer)
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := New("chatml", benchChatML, tok)
	if err != nil {
		b.Fatal(err)
	}
	s, err := m.NewSession(infer.SessionOptions{Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	words := strings.Fields("the lava flows under the ice and the fire of the mountain warms the valley below")
	text := func(n int) string { return strings.Join(append(words[:0:0], repeatWords(words, n)...), " ") }
	system, user1, answer, user2 := text(40), text(60), text(50), text(30)

	// The state after turn 1: the cache holds the conversation through the
	// first answer, as a chat leaves it when the answer re-tokenizes as it
	// was generated. (This random model's answers are ids beyond the small
	// tokenizer, which decode to nothing, so the answer is a fixed text.)
	turn1 := func() *Conversation {
		c := NewConversation(Options{Template: tmpl, Tokenizer: tok, Session: s, MaxTokens: 0})
		if err := c.SetMessages([]Message{{"system", system}, {"user", user1}, {"assistant", answer}}); err != nil {
			b.Fatal(err)
		}
		ids, err := c.render(false)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Eval(ids, false, nil); err != nil {
			b.Fatal(err)
		}
		c.cached = ids
		return c
	}
	b.Run("reuse", func(b *testing.B) {
		var new, all int
		var cpu time.Duration
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			c := turn1()
			b.StartTimer()
			c0 := cputime.Process()
			r, err := c.Reply(context.Background(), user2, nil)
			if err != nil {
				b.Fatal(err)
			}
			cpu += cputime.Process() - c0
			new, all = r.PromptTokens-r.Reused, r.PromptTokens
		}
		b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(new), "new-tokens")
		b.ReportMetric(float64(all), "prompt-tokens")
	})
	b.Run("refill", func(b *testing.B) {
		var all int
		var cpu time.Duration
		for range b.N {
			b.StopTimer()
			c := turn1()
			c.Turns = append(c.Turns, Message{"user", user2})
			ids, err := c.render(true)
			if err != nil {
				b.Fatal(err)
			}
			s.Reset()
			b.StartTimer()
			c0 := cputime.Process()
			if err := s.Eval(ids, false, nil); err != nil {
				b.Fatal(err)
			}
			cpu += cputime.Process() - c0
			all = len(ids)
		}
		b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(all), "prompt-tokens")
	})
}

func repeatWords(w []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = w[(i*7)%len(w)]
	}
	return out
}
