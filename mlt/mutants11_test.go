package mlt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Tests from the mutants left alive in mlt's files by session 11's schema runs
// (docs/RELIABILITY.md, "mlt ..., session 11 (mutmlt11)"): each fails with the
// mutant it names planted. Expected values come from SPEC.md and the package
// documentation, written out here, never from the code.

// TestChatCheckOffsetInMemory: a chat section broken in memory is reported by
// Validate with offset -1, the in-memory offset of every whole-tokenizer error
// (SPEC.md; chat.go checkChatSection's -1, which INVERT_NEGATIVES and
// ARITHMETIC_BASE turn into +1).
func TestChatCheckOffsetInMemory(t *testing.T) {
	tk := smallByteLevel()
	n := int32(len(tk.Tokens))
	tk.SetChat(&Chat{StopIDs: []int32{n}})
	err := tk.Validate()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Offset != -1 || !strings.Contains(err.Error(), "outside the vocabulary") || strings.Contains(err.Error(), " at offset") {
		t.Errorf("Validate = %v, want ML_E_FORMAT at offset -1 (no offset printed) saying the stop id is outside the vocabulary", err)
	}
}

// fimAddedFirst is a kind 2 tokenizer whose added tokens come first, from id
// 0, and the 256 single bytes after them (byte c is id len(added)+c), so a
// sentinel, a stop token or BOS can be id 0.
func fimAddedFirst(t *testing.T, bos int32, added ...string) *Tokenizer {
	t.Helper()
	tk := &Tokenizer{Kind: KindByteLevel, BOS: bos, EOS: -1}
	for _, a := range added {
		tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte(a)})
	}
	for c := range 256 {
		tk.Tokens = append(tk.Tokens, Token{Attr: AttrNormal, Bytes: []byte{byte(c)}})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestFIMIdZero: id 0 is a token like any other (SPEC.md: ids are 0..n_vocab-1),
// so a family's sentinel, a FIM stop token or BOS at id 0 counts (fim.go 74
// `pre < 0`, `suf < 0`, 83 `id >= 0`, 130 `t.BOS >= 0` turned into `<= 0` /
// `> 0`); a middle sentinel at id 0 is one of the fixed ids PromptWithin
// keeps room for (127 `f.Mid >= 0`); and a suffix longer than everything
// else fits (142's capacity, `+ len(suf)` → `-`, a negative make).
func TestFIMIdZero(t *testing.T) {
	tk := fimAddedFirst(t, -1, "<fim_prefix>", "<fim_suffix>", "<fim_middle>")
	if f, ok := tk.FIM(); !ok || f.Family != "StarCoder" || f.Pre != 0 || f.Suf != 1 || f.Mid != 2 {
		t.Errorf("prefix sentinel at 0: FIM = %+v, %v; want StarCoder 0 1 2", f, ok)
	}
	tk = fimAddedFirst(t, -1, "<fim_suffix>", "<fim_prefix>", "<fim_middle>")
	if f, ok := tk.FIM(); !ok || f.Family != "StarCoder" || f.Pre != 1 || f.Suf != 0 || f.Mid != 2 {
		t.Errorf("suffix sentinel at 0: FIM = %+v, %v; want StarCoder 1 0 2", f, ok)
	}
	tk = fimAddedFirst(t, -1, "<fim_pad>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>")
	if f, ok := tk.FIM(); !ok || !slices.Equal(f.Stops, []int{0}) {
		t.Errorf("stop token at 0: FIM = %+v, %v; want Stops [0]", f, ok)
	}
	// BOS 0: <s> pre 'a' suf 'b' mid; bytes from 4.
	tk = fimAddedFirst(t, 0, "<s>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>")
	f := FIM{Family: "StarCoder", Pre: 1, Suf: 2, Mid: 3}
	if got, want := f.Prompt(tk, "a", "b", true), []int{0, 1, 4 + 'a', 2, 4 + 'b', 3}; !slices.Equal(got, want) {
		t.Errorf("BOS 0: Prompt = %v, want %v", got, want)
	}
	// Empty prefix, suffix of 8 bytes: 3 sentinels + 8.
	if got, want := f.Prompt(tk, "", "bbbbbbbb", false), []int{1, 2, 4 + 'b', 4 + 'b', 4 + 'b', 4 + 'b', 4 + 'b', 4 + 'b', 4 + 'b', 4 + 'b', 3}; !slices.Equal(got, want) {
		t.Errorf("long suffix: Prompt = %v, want %v", got, want)
	}
	// Middle sentinel at 0: 3 fixed ids, limit 7 leaves room 4, the suffix gets
	// 4/4 = 1 but has none, the prefix "abcdef" keeps its last 4.
	tk = fimAddedFirst(t, -1, "<fim_middle>", "<fim_prefix>", "<fim_suffix>")
	f = FIM{Family: "StarCoder", Pre: 1, Suf: 2, Mid: 0}
	got, trimmed := f.PromptWithin(tk, "abcdef", "", false, 7)
	if want := []int{1, 3 + 'c', 3 + 'd', 3 + 'e', 3 + 'f', 2, 0}; !trimmed || !slices.Equal(got, want) {
		t.Errorf("middle at 0, limit 7: PromptWithin = %v, %v; want %v, true", got, trimmed, want)
	}
}

// TestEmbedLimitsAndOffset: the embedding section's limits are inclusive
// (docs/FORMATS.md: at most 256 prompts, names of 1..256 bytes, texts of at
// most 65536; embed.go 103, 108, 110 `>` → `>=`), prompt names are sorted
// and unique, so a name given twice is refused (114 `>=` → `>`), and an
// error found in memory has offset -1 (185's -1).
func TestEmbedLimitsAndOffset(t *testing.T) {
	big := func() *Embed {
		e := &Embed{Pooling: PoolMean}
		for i := range MaxEmbedPrompts {
			e.Prompts = append(e.Prompts, NamedPrompt{Name: fmt.Sprintf("p%03d", i), Text: "x"})
		}
		e.Prompts[0].Name = "p000" + strings.Repeat("n", MaxPromptName-4)
		e.Prompts[1].Text = strings.Repeat("t", MaxPromptLen)
		return e
	}
	tk := smallByteLevel()
	tk.SetEmbed(big())
	if err := tk.Validate(); err != nil {
		t.Fatalf("embedding section at the limits: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Embed)
		says string
	}{
		{"257 prompts", func(e *Embed) { e.Prompts = append(e.Prompts, NamedPrompt{Name: "q", Text: "x"}) }, "257 prompts, more than the limit 256"},
		{"name of 257 bytes", func(e *Embed) { e.Prompts[0].Name += "n" }, "prompt 0: name length 257 out of range 1..256"},
		{"text above 64 KiB", func(e *Embed) { e.Prompts[1].Text += "t" }, "65537 bytes, above the limit 65536"},
		{"name twice", func(e *Embed) { e.Prompts[3].Name = e.Prompts[2].Name }, "prompt names must be sorted and unique"},
	} {
		tk := smallByteLevel()
		e := big()
		c.edit(e)
		tk.SetEmbed(e)
		err := tk.Validate()
		var fe *Error
		if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) || fe.Offset != -1 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Validate = %v, want ML_E_FORMAT at offset -1 saying %q", c.name, err, c.says)
		}
	}
}

// TestEmbedErrorPlaces: the offsets of the embedding section's parse errors,
// from docs/FORMATS.md's layout written out: after the file of
// smallByteLevel, the section's u32 length and u32 version, then the payload
// (pooling byte, flags byte, u32 prompt count, prompts, default prompt).
// Kills embed.go 128 `off-4`, 130 `len(p) < 2` → `<=`, 135 `off+1`, 141
// `off + 2`, 158's offset and count.
func TestEmbedErrorPlaces(t *testing.T) {
	base := int64(len(smallByteLevel().Bytes()))
	pay := base + 8
	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	with := func(sec []byte) []byte {
		b := smallByteLevel().Bytes()
		binary.LittleEndian.PutUint32(b[28:], FlagEmbed)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(sec)))
		return append(b, sec...)
	}
	for _, c := range []struct {
		name string
		sec  []byte
		says string
		off  int64
	}{
		{"version", cat(le(2), []byte{1, 0}, le(0), le(0)), "embedding section version 2 is not supported", base + 4},
		{"two bytes", cat(le(1), []byte{1, 0}), "embedding section: prompt count: the payload ends (0 bytes left, need 4)", pay + 2},
		{"unknown flag", cat(le(1), []byte{1, 0x80}, le(0), le(0)), "flags 0x80 has unknown bits", pay + 1},
		{"trailing", cat(le(1), []byte{1, 0}, le(0), le(0), []byte{0, 0}), "embedding section: 2 bytes after the default prompt", pay + 10},
	} {
		_, err := Parse(with(c.sec))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != c.off {
			t.Errorf("%s: got %v, want ML_E_FORMAT saying %q at offset %d", c.name, err, c.says, c.off)
		}
	}
}
