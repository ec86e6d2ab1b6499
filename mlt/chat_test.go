package mlt

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func chatTokenizer() *Tokenizer {
	t := smallByteLevel()
	t.SetChat(&Chat{
		Templates: []NamedTemplate{
			{"default", "{% for m in messages %}<|x|>{{ m.content }}\n{% endfor %}"},
			{"tool_use", "þú ☃ {{ tools | tojson }}"},
		},
		BOSToken: "",
		EOSToken: "<|x|>",
		StopIDs:  []int32{259, 10},
	})
	return t
}

// chatPayload builds the section's bytes from the layout docs/FORMATS.md
// gives, independently of appendChatSection.
func chatPayload(version uint32, fields ...any) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, version)
	for _, f := range fields {
		switch v := f.(type) {
		case uint32:
			b = le.AppendUint32(b, v)
		case string:
			b = append(le.AppendUint32(b, uint32(len(v))), v...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// withChatSection returns the image of smallByteLevel with the chat flag and
// the given section (version and payload) after the merges.
func withChatSection(sec []byte) []byte {
	t := smallByteLevel()
	b := t.Bytes()
	binary.LittleEndian.PutUint32(b[28:], FlagChat)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(sec)))
	return append(b, sec...)
}

func TestChatSectionRoundTrip(t *testing.T) {
	tok := chatTokenizer()
	b := tok.Bytes()
	base := smallByteLevel().Bytes()
	want := chatPayload(1,
		uint32(2), "default", tok.Chat.Templates[0].Source, "tool_use", tok.Chat.Templates[1].Source,
		"", "<|x|>", uint32(2), uint32(259), uint32(10))
	if got := b[len(base)+4:]; string(got) != string(want) {
		t.Fatalf("section bytes\n got %q\nwant %q", got, want)
	}
	if n := binary.LittleEndian.Uint32(b[len(base):]); int(n) != len(want) {
		t.Errorf("section length %d, want %d", n, len(want))
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Flags&FlagChat == 0 || !reflect.DeepEqual(got.Chat, tok.Chat) {
		t.Errorf("parsed chat %+v (flags %d), want %+v", got.Chat, got.Flags, tok.Chat)
	}
	p := filepath.Join(t.TempDir(), "c.mlt")
	if err := tok.Write(p); err != nil {
		t.Fatal(err)
	}
	if got, err = Open(p); err != nil || !reflect.DeepEqual(got.Chat, tok.Chat) {
		t.Errorf("Open: %v, chat %+v", err, got.Chat)
	}
	// An empty section (no template, no strings, no stop ids) is valid.
	e := smallByteLevel()
	e.SetChat(&Chat{})
	if got, err = Parse(e.Bytes()); err != nil || got.Chat == nil || len(got.Chat.Templates) != 0 {
		t.Errorf("empty chat section: %v, %+v", err, got)
	}
	// Without a chat the image is exactly SPEC.md's.
	e.SetChat(nil)
	if string(e.Bytes()) != string(base) || e.Flags&FlagChat != 0 {
		t.Errorf("SetChat(nil) left the flag or the section")
	}
}

func TestChatTemplateLookup(t *testing.T) {
	c := chatTokenizer().Chat
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{{"", c.Templates[0].Source, true}, {"default", c.Templates[0].Source, true}, {"tool_use", c.Templates[1].Source, true}, {"rag", "", false}} {
		if got, ok := c.Template(tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("Template(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	one := &Chat{Templates: []NamedTemplate{{"tool_use", "x"}}}
	if got, ok := one.Template(""); got != "x" || !ok {
		t.Errorf("default of a list without \"default\": %q %v, want the first", got, ok)
	}
	var none *Chat
	if _, ok := none.Template(""); ok {
		t.Errorf("nil Chat has a template")
	}
}

func TestChatSectionMalformed(t *testing.T) {
	huge := uint32(0xffffffff)
	for _, tc := range []struct {
		name string
		sec  []byte
		want string
	}{
		{"version", chatPayload(2, uint32(0), "", "", uint32(0)), "chat section version 2 is not supported"},
		{"template count above the limit", chatPayload(1, uint32(MaxChatTemplates+1)), "template count 65 above the limit 64"},
		{"template count past the bytes", chatPayload(1, uint32(3), "a", "b"), "template count 3 needs at least 24 bytes"},
		{"huge template count", chatPayload(1, huge), "above the limit"},
		{"name length huge", chatPayload(1, uint32(1), huge, []byte("xxxxxxxx")), "template name: length 4294967295 above the limit 256"},
		{"source past the section", chatPayload(1, uint32(1), "default", uint32(100), []byte("abc"), "", "", uint32(0)), "template source: 100 bytes run past the section"},
		{"empty name", chatPayload(1, uint32(1), "", "x", "", "", uint32(0)), "name length 0 out of range"},
		{"name twice", chatPayload(1, uint32(2), "a", "x", "a", "y", "", "", uint32(0)), `name "a" given twice`},
		{"source not UTF-8", chatPayload(1, uint32(1), "a", "\xff", "", "", uint32(0)), "is not valid UTF-8"},
		{"eos not UTF-8", chatPayload(1, uint32(0), "", "\xc3", uint32(0)), "eos_token is not valid UTF-8"},
		{"bos missing", chatPayload(1, uint32(0)), "bos_token length: the payload ends"},
		{"stop id outside the vocabulary", chatPayload(1, uint32(0), "", "", uint32(1), uint32(260)), "stop id 260 (index 0) outside the vocabulary of 260 tokens"},
		{"negative stop id", chatPayload(1, uint32(0), "", "", uint32(1), huge), "stop id -1"},
		{"stop id twice", chatPayload(1, uint32(0), "", "", uint32(2), uint32(5), uint32(5)), "stop id 5 listed twice"},
		{"stop ids above the limit", chatPayload(1, uint32(0), "", "", uint32(MaxChatStopIDs+1)), "stop id count 1025 above the limit 1024"},
		{"stop ids past the bytes", chatPayload(1, uint32(0), "", "", uint32(2), uint32(5)), "stop id count 2 needs at least 8 bytes, 4 left"},
		{"trailing bytes", chatPayload(1, uint32(0), "", "", uint32(0), []byte{0}), "1 bytes after the stop ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(withChatSection(tc.sec))
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ML_E_FORMAT containing %q", err, tc.want)
			}
		})
	}
}

// TestChatSectionTruncated cuts the good payload at every byte (with the
// section length fixed to match) and flips each byte: every cut must fail
// with ML_E_FORMAT, no flip may panic.
func TestChatSectionTruncated(t *testing.T) {
	good := chatTokenizer().Bytes()
	base := len(smallByteLevel().Bytes())
	sec := good[base+4:]
	for k := range len(sec) {
		if _, err := Parse(withChatSection(sec[:k])); !errors.Is(err, ErrFormat) {
			t.Fatalf("payload cut to %d of %d bytes: got %v, want ML_E_FORMAT", k, len(sec), err)
		}
	}
	for i := range sec {
		b := withChatSection(sec)
		b[base+4+i] ^= 0xa5
		if _, err := Parse(b); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("byte %d flipped: %v is not ML_E_FORMAT", i, err)
		}
	}
}

func TestChatValidateBeforeWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Tokenizer)
		want string
	}{
		{"stop id", func(t *Tokenizer) { t.Chat.StopIDs = []int32{300} }, "stop id 300"},
		{"name twice", func(t *Tokenizer) { t.Chat.Templates[1].Name = "default" }, "given twice"},
		{"too long", func(t *Tokenizer) { t.Chat.Templates[0].Source = strings.Repeat("x", MaxTemplateLen+1) }, "above the limit"},
		{"flag without chat", func(t *Tokenizer) { t.Chat = nil }, "must be set exactly when"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := chatTokenizer()
			tc.mod(tok)
			err := tok.Write(filepath.Join(t.TempDir(), "x.mlt"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzChatSection feeds arbitrary chat payloads (after a valid tokenizer):
// no panic, only ML_E_FORMAT errors, and a payload that parses is canonical
// (Bytes gives the file back) and validates.
func FuzzChatSection(f *testing.F) {
	good := chatTokenizer().Bytes()
	f.Add(good[len(smallByteLevel().Bytes())+4:])
	f.Add(chatPayload(1, uint32(0), "", "", uint32(0)))
	f.Fuzz(func(t *testing.T, sec []byte) {
		b := withChatSection(sec)
		tk, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		if got := tk.Bytes(); string(got) != string(b) {
			t.Fatalf("Bytes() of a parsed file differs from the file")
		}
		if err := tk.Validate(); err != nil {
			t.Fatalf("a parsed file does not validate: %v", err)
		}
		_, _ = tk.Chat.Template("")
	})
}
