package mlt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// TestPostProcessorCases compares Encode and EncodePair with what the
// tokenizers library gives for the same tokenizer.json (testdata/postproc:
// make_cases.js says how cases.json was made), for Qwen3-Embedding's
// post-processor and variants, and for llama2's and gemma3's own, which the
// flags describe (no section, so those files are what they were).
func TestPostProcessorCases(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "postproc", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []struct {
		Name, Tokenizer string
		PostProcessor   json.RawMessage `json:"post_processor"`
		Cases           []struct {
			Text           string
			Pair           *string
			Special, Plain []int
		}
	}
	if err := json.Unmarshal(b, &sets); err != nil {
		t.Fatal(err)
	}
	wantSection := map[string]bool{"qwen3-embedding": true, "qwen3-embedding-sequence": true, "qwen3-wrap-multi": true,
		"qwen3-pair-b-first": true, "llama2-pair-one-bos": true}
	for _, set := range sets {
		t.Run(set.Name, func(t *testing.T) {
			src := testenv.Shared(t, "tokenizers", set.Tokenizer, "tokenizer.json")
			var j map[string]json.RawMessage
			raw, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &j); err != nil {
				t.Fatal(err)
			}
			if string(set.PostProcessor) != "null" {
				j["post_processor"] = set.PostProcessor
			}
			dir := t.TempDir()
			raw, _ = json.Marshal(j)
			if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := FromHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.Post != nil; got != wantSection[set.Name] {
				t.Fatalf("post-processor section present: got %v, want %v", got, wantSection[set.Name])
			}
			// Through the file, so the section's encoding is what is checked.
			tok, err = Parse(tok.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range set.Cases {
				var got, plain []int
				if c.Pair == nil {
					got, plain = tok.Encode(c.Text, true), tok.Encode(c.Text, false)
				} else {
					got, plain = tok.EncodePair(c.Text, *c.Pair, true), tok.EncodePair(c.Text, *c.Pair, false)
				}
				if !slices.Equal(got, c.Special) || !slices.Equal(plain, c.Plain) {
					t.Errorf("%q / %v: got %v and %v (without special tokens), want %v and %v", c.Text, c.Pair, got, plain, c.Special, c.Plain)
				}
			}
		})
	}
}

func postTokenizer(t *testing.T) *Tokenizer {
	t.Helper()
	tok := smallByteLevel()
	tok.SetPost(&Post{
		Single: []PostItem{{Seq: PostSpecial, IDs: []int32{1, 2}}, {Seq: PostSeqA}, {Seq: PostSpecial, IDs: []int32{3}}},
		Pair:   []PostItem{{Seq: PostSeqA}, {Seq: PostSpecial, IDs: []int32{3}}, {Seq: PostSeqB}},
	})
	if err := tok.Validate(); err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestPostSectionRoundTrip(t *testing.T) {
	tok := postTokenizer(t)
	b := tok.Bytes()
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), b) {
		t.Fatal("re-encoding the parsed tokenizer changed its bytes")
	}
	plain := back.Encode("ab", false)
	want := append(append([]int{1, 2}, plain...), 3)
	if got := back.Encode("ab", true); !slices.Equal(got, want) {
		t.Errorf("Encode: got %v, want %v", got, want)
	}
	if got, want := back.EncodePrompt("ab"), append([]int{1, 2}, plain...); !slices.Equal(got, want) {
		t.Errorf("EncodePrompt: got %v, want %v (the template's tokens before $A, none after)", got, want)
	}
	wantPair := append(append(slices.Clone(plain), 3), back.Encode("b", false)...)
	if got := back.EncodePair("ab", "b", true); !slices.Equal(got, wantPair) {
		t.Errorf("EncodePair: got %v, want %v", got, wantPair)
	}
	// Without the section the bytes are those of the plain tokenizer.
	tok.SetPost(nil)
	if !bytes.Equal(tok.Bytes(), smallByteLevel().Bytes()) {
		t.Error("removing the section does not give the plain file back")
	}
}

func TestPostSectionErrors(t *testing.T) {
	good := postTokenizer(t).Bytes()
	plainLen := len(smallByteLevel().Bytes())
	payload := plainLen + 8 // the section's length and version come first
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"version", func(b []byte) []byte { le.PutUint32(b[plainLen+4:], 2); return b }, "post-processor section version 2"},
		{"unknown item kind", func(b []byte) []byte { b[payload+4] = 7; return b }, "unknown kind 7"},
		{"id outside the vocabulary", func(b []byte) []byte { le.PutUint32(b[payload+4+1+4:], 1<<20); return b }, "outside the vocabulary"},
		{"no $A", func(b []byte) []byte { b[payload+4+1+4+8] = PostSeqB; return b }, "holds $A 0 times and $B 1 times"},
		{"item count beyond the payload", func(b []byte) []byte { le.PutUint32(b[payload:], 60); return b }, "single item count 60"},
		{"trailing bytes", func(b []byte) []byte {
			le.PutUint32(b[plainLen:], le.Uint32(b[plainLen:])+1)
			return append(b, 0)
		}, "1 bytes after the pair template"},
		{"add_bos with the section", func(b []byte) []byte { le.PutUint32(b[28:], le.Uint32(b[28:])|FlagAddBOS); return b }, "both set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.edit(slices.Clone(good)))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an ML_E_FORMAT error containing %q", err, tc.want)
			}
		})
	}
}

func embedTokenizer() *Tokenizer {
	tok := smallByteLevel()
	tok.SetEmbed(&Embed{Pooling: PoolLast, Normalize: true, DefaultPrompt: "",
		Prompts: []NamedPrompt{{"document", ""}, {"query", "Instruct: Given a query\nQuery:"}}})
	return tok
}

func TestEmbedSectionRoundTrip(t *testing.T) {
	tok := embedTokenizer()
	if err := tok.Validate(); err != nil {
		t.Fatal(err)
	}
	b := tok.Bytes()
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), b) {
		t.Fatal("re-encoding changed the bytes")
	}
	if q, ok := back.Embed.Prompt("query"); !ok || q != "Instruct: Given a query\nQuery:" || back.Embed.Pooling != PoolLast || !back.Embed.Normalize {
		t.Errorf("got %+v", back.Embed)
	}
}

// TestEmbedSectionBytes pins the section's layout: the flags byte of a
// file without ExcludePrompt is the normalize byte of the files written
// before it (0 or 1), so those stay byte-identical; max pooling is 4 and
// ExcludePrompt bit 1. The expected bytes are written out from
// docs/FORMATS.md's table, not produced by the writer.
func TestEmbedSectionBytes(t *testing.T) {
	head := len(smallByteLevel().Bytes())
	for _, tc := range []struct {
		e    Embed
		want []byte
	}{
		{Embed{Pooling: PoolLast, Normalize: true, Prompts: []NamedPrompt{{"q", "Q:"}}},
			[]byte{1, 0, 0, 0, 3, 1, 1, 0, 0, 0, 1, 0, 0, 0, 'q', 2, 0, 0, 0, 'Q', ':', 0, 0, 0, 0}},
		{Embed{Pooling: PoolMean}, []byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{Embed{Pooling: PoolMax, Normalize: true, ExcludePrompt: true}, []byte{1, 0, 0, 0, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0}},
		{Embed{Pooling: PoolMean, ExcludePrompt: true}, []byte{1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		tok := smallByteLevel()
		e := tc.e
		tok.SetEmbed(&e)
		b := tok.Bytes()
		// The section's u32 byte length precedes its version.
		if got := b[head+4:]; !bytes.Equal(got, tc.want) {
			t.Errorf("%+v: section bytes %v, want %v", tc.e, got, tc.want)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatalf("%+v: %v", tc.e, err)
		}
		if !reflect.DeepEqual(*back.Embed, tc.e) {
			t.Errorf("read back %+v, want %+v", *back.Embed, tc.e)
		}
	}
}

func TestEmbedSectionErrors(t *testing.T) {
	good := embedTokenizer().Bytes()
	payload := len(smallByteLevel().Bytes()) + 8
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"pooling", func(b []byte) []byte { b[payload] = 5; return b }, "pooling 5 unknown"},
		{"pooling 0", func(b []byte) []byte { b[payload] = 0; return b }, "pooling 0 unknown"},
		{"flags", func(b []byte) []byte { b[payload+1] = 4; return b }, "flags 0x4 has unknown bits"},
		{"cls excluding the prompt", func(b []byte) []byte { b[payload], b[payload+1] = PoolCLS, 3; return b }, "cls pooling cannot exclude the prompt"},
		{"prompt count", func(b []byte) []byte { le.PutUint32(b[payload+2:], 1000); return b }, "embedding section: prompt count 1000"},
		{"unsorted", func(b []byte) []byte { b[payload+2+4+4] = 'z'; return b }, "sorted and unique"},
		{"default not a prompt", func(b []byte) []byte {
			le.PutUint32(b[len(b)-4:], 1)
			le.PutUint32(b[payload-8:], le.Uint32(b[payload-8:])+1)
			return append(b, 'x')
		}, `default prompt "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.edit(slices.Clone(good)))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an ML_E_FORMAT error containing %q", err, tc.want)
			}
		})
	}
}
