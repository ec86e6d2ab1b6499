package convert

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/mlt"
)

// llama.cpp's token types (llama_token_type / gguf-py TokenType).
const (
	ggufTokNormal      = 1
	ggufTokUnknown     = 2
	ggufTokControl     = 3
	ggufTokUserDefined = 4
	ggufTokUnused      = 5
	ggufTokByte        = 6
)

// ggufPreFlags maps the tokenizer.ggml.pre names llama.cpp uses
// (llama-vocab.cpp, llama_vocab::impl::load) to the .mlt flags whose regex is
// the same as the pre type's regex_exprs. Names with other regexes are
// refused.
var ggufPreFlags = map[string]uint32{
	// LLAMA3: the Llama 3 regex; llama.cpp ignores merges for it.
	"llama3": mlt.FlagIgnoreMerges, "llama-v3": mlt.FlagIgnoreMerges, "llama-bpe": mlt.FlagIgnoreMerges,
	"falcon3": mlt.FlagIgnoreMerges, "falcon-h1": mlt.FlagIgnoreMerges, "pixtral": mlt.FlagIgnoreMerges,
	"midm-2.0": mlt.FlagIgnoreMerges, "lfm2": mlt.FlagIgnoreMerges,
	// DBRX, SMAUG: the Llama 3 regex, merges not ignored (Phi-4 writes "dbrx").
	"dbrx": 0, "smaug-bpe": 0,
	// QWEN2: single digits (and NFC, as Hugging Face's Qwen2 tokenizer does).
	"qwen2": mlt.FlagNFC | mlt.FlagSingleDigits, "deepseek-r1-qwen": mlt.FlagNFC | mlt.FlagSingleDigits,
	"kormo": mlt.FlagNFC | mlt.FlagSingleDigits, "megrez": mlt.FlagNFC | mlt.FlagSingleDigits,
	"qwen35": mlt.FlagNFC | mlt.FlagSingleDigits | mlt.FlagQwen35Regex,
	// GPT2 (and MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING): the GPT-2 regex.
	"gpt-2": mlt.FlagGPT2Regex, "phi-2": mlt.FlagGPT2Regex, "olmo": mlt.FlagGPT2Regex, "mpt": mlt.FlagGPT2Regex,
	"jais": mlt.FlagGPT2Regex, "trillion": mlt.FlagGPT2Regex, "exaone4": mlt.FlagGPT2Regex,
	"granite-docling": mlt.FlagGPT2Regex, "mellum": mlt.FlagGPT2Regex,
	// REFACT, STARCODER, SMOLLM, COMMAND_R, CODESHELL, EXAONE, MINERVA: \p{N}
	// split off, then the GPT-2 regex (Granite 3 writes "refact").
	"refact": mlt.FlagGPT2Regex | mlt.FlagSplitDigits, "smollm": mlt.FlagGPT2Regex | mlt.FlagSplitDigits,
	"starcoder": mlt.FlagGPT2Regex | mlt.FlagSplitDigits, "codeshell": mlt.FlagGPT2Regex | mlt.FlagSplitDigits,
	"command-r": mlt.FlagGPT2Regex | mlt.FlagSplitDigits, "exaone": mlt.FlagGPT2Regex | mlt.FlagSplitDigits,
	"minerva-7b": mlt.FlagGPT2Regex | mlt.FlagSplitDigits,
}

// ggufPreRegex maps pre names whose regex no flag selects to the
// pre-tokenizer regex of the model's tokenizer.json (Oniguruma syntax, which
// the .mlt pipeline section holds), with the flags llama.cpp sets for them.
var ggufPreRegex = map[string]struct {
	re    string
	flags uint32
}{
	// TEKKEN (Mistral NeMo, Small 3, Pixtral): case-aware letter classes;
	// llama.cpp ignores merges and adds BOS for it.
	"tekken": {`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
		mlt.FlagIgnoreMerges | mlt.FlagAddBOS},
	// GPT4O (GPT-4o, gpt-oss: OpenAI's o200k): llama-vocab.cpp quotes this
	// regex as the "original regex from tokenizer.json" of its regex_exprs;
	// llama.cpp neither ignores merges nor adds BOS for it.
	"gpt-4o": {`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`, 0},
}

// ggufTokenizer builds the .mlt from tokenizer.ggml.* and the chat template
// from tokenizer.chat_template. It returns nil when skip is set or the file
// has no tokenizer (with a warning).
func ggufTokenizer(f *gguf.File, path string, vocab int, skip bool) (*mlt.Tokenizer, []string, error) {
	if skip {
		return nil, nil, nil
	}
	var warns []string
	errf := func(key, format string, args ...any) error {
		return fmt.Errorf("convert: %s: key %s: "+format+" (use --no-tokenizer to convert the model alone)", append([]any{path, key}, args...)...)
	}
	model, ok := f.String("tokenizer.ggml.model")
	if !ok {
		return nil, []string{"the file has no tokenizer (tokenizer.ggml.model): no .mlt written"}, nil
	}
	tv, _ := f.Lookup("tokenizer.ggml.tokens")
	toks, ok := tv.Strings()
	if !ok || len(toks) == 0 {
		return nil, nil, errf("tokenizer.ggml.tokens", "missing or not an array of strings")
	}
	types := make([]int64, len(toks))
	for i := range types {
		types[i] = ggufTokNormal
	}
	if v, ok := f.Lookup("tokenizer.ggml.token_type"); ok {
		tt, ok := v.Ints()
		if !ok || len(tt) != len(toks) {
			return nil, nil, errf("tokenizer.ggml.token_type", "want %d integers", len(toks))
		}
		types = tt
	}
	nAll := len(toks)
	// Placeholders for embedding rows without a token (convert_hf_to_gguf's
	// "[PAD<id>]", type unused) are not tokens.
	for n := len(toks); n > 0 && types[n-1] == ggufTokUnused && toks[n-1] == padToken(n-1); n-- {
		toks, types = toks[:n-1], types[:n-1]
	}
	if len(toks) > vocab {
		return nil, nil, errf("tokenizer.ggml.tokens", "%d tokens, more than the model's vocabulary of %d", len(toks), vocab)
	}
	t := &mlt.Tokenizer{BOS: -1, EOS: -1, Tokens: make([]mlt.Token, len(toks))}
	id := func(key string) (int32, error) {
		v, ok := f.Lookup(key)
		if !ok {
			return -1, nil
		}
		n, ok := v.Int()
		if !ok {
			return 0, errf(key, "%v is not an integer", v)
		}
		if n == 0xffffffff || n < 0 { // llama.cpp's "none"
			return -1, nil
		}
		if n >= int64(len(toks)) {
			return 0, errf(key, "id %d is not a token (vocabulary of %d)", n, len(toks))
		}
		return int32(n), nil
	}
	var err error
	if t.BOS, err = id("tokenizer.ggml.bos_token_id"); err != nil {
		return nil, nil, err
	}
	if t.EOS, err = id("tokenizer.ggml.eos_token_id"); err != nil {
		return nil, nil, err
	}
	addEOS, _ := f.Bool("tokenizer.ggml.add_eos_token")
	switch model {
	case "llama":
		t.Kind = mlt.KindSentencePiece
		addBOS := true // llama.cpp's default for SPM vocabularies
		if b, ok := f.Bool("tokenizer.ggml.add_bos_token"); ok {
			addBOS = b
		}
		if addBOS && t.BOS >= 0 {
			t.Flags |= mlt.FlagAddBOS
		}
		// llama.cpp puts ▁ before every text segment, also after special
		// tokens: the legacy behaviour, flag 4 unset.
		if b, ok := f.Bool("tokenizer.ggml.add_space_prefix"); ok && !b {
			t.Flags |= mlt.FlagNoPrefix
		}
		for i, s := range toks {
			switch types[i] {
			case ggufTokByte:
				b, ok := byteToken(s)
				if !ok {
					return nil, nil, errf("tokenizer.ggml.tokens", "token %d %q has the byte type but is not <0xXX>", i, s)
				}
				t.Tokens[i] = mlt.Token{Attr: mlt.AttrByte, Bytes: []byte{b}}
			case ggufTokNormal:
				t.Tokens[i] = mlt.Token{Attr: mlt.AttrNormal, Bytes: []byte(s)}
			default:
				t.Tokens[i] = mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte(s)}
			}
		}
		sv, _ := f.Lookup("tokenizer.ggml.scores")
		scores, ok := sv.Float32s()
		if !ok || len(scores) != nAll {
			return nil, nil, errf("tokenizer.ggml.scores", "want %d f32 scores for a llama (SentencePiece) vocabulary", nAll)
		}
		t.Merges = spMerges(toks, scores[:len(toks)])
	case "gpt2":
		t.Kind = mlt.KindByteLevel
		pre, _ := f.String("tokenizer.ggml.pre")
		fl, ok := ggufPreFlags[pre]
		addBOS := fl&mlt.FlagIgnoreMerges != 0 // llama.cpp's default: true for the Llama 3 pre types
		if rx, isRx := ggufPreRegex[pre]; isRx {
			fl, ok, addBOS = rx.flags&^mlt.FlagAddBOS|mlt.FlagPipeline, true, rx.flags&mlt.FlagAddBOS != 0
			t.Pipeline = &mlt.Pipeline{Unk: -1, PreTokenizers: []mlt.Step{mlt.SplitRegex(rx.re), {Op: mlt.OpByteLevel}}}
		}
		if !ok {
			return nil, nil, errf("tokenizer.ggml.pre", "pre-tokenizer %q: its regex is not one the .mlt format holds (llama-bpe, dbrx, qwen2, qwen35, gpt-2, refact, smollm, tekken, gpt-4o and their aliases are)", pre)
		}
		t.Flags |= fl
		if b, ok := f.Bool("tokenizer.ggml.add_bos_token"); ok {
			addBOS = b
		}
		if addBOS && t.BOS >= 0 {
			t.Flags |= mlt.FlagAddBOS
		}
		literal, first := 0, ""
		for i, s := range toks {
			if types[i] == ggufTokNormal {
				b, ok := byteLevelDecode(s)
				if !ok {
					// Not a byte-level piece (some converters mark added
					// tokens normal): matched literally, as an added token.
					if literal++; literal == 1 {
						first = fmt.Sprintf("%d %q", i, s)
					}
					t.Tokens[i] = mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte(s)}
					types[i] = ggufTokUserDefined
					continue
				}
				t.Tokens[i] = mlt.Token{Attr: mlt.AttrNormal, Bytes: b}
			} else {
				t.Tokens[i] = mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte(s)}
			}
		}
		if literal > 0 {
			warns = append(warns, fmt.Sprintf("%d tokens typed normal are not byte-level pieces (first: %s): kept as added tokens, matched literally", literal, first))
		}
		mv, _ := f.Lookup("tokenizer.ggml.merges")
		merges, ok := mv.Strings()
		if !ok {
			return nil, nil, errf("tokenizer.ggml.merges", "missing or not an array of strings")
		}
		index := make(map[string]uint32, len(toks))
		for i, s := range toks {
			if types[i] == ggufTokNormal {
				if _, dup := index[s]; !dup {
					index[s] = uint32(i)
				}
			}
		}
		for i, m := range merges {
			l, r, ok := strings.Cut(m, " ")
			li, ok1 := index[l]
			ri, ok2 := index[r]
			mi, ok3 := index[l+r]
			if !ok || !ok1 || !ok2 || !ok3 {
				return nil, nil, errf("tokenizer.ggml.merges", "merge %d %q does not name two tokens whose concatenation is a token", i, m)
			}
			t.Merges = append(t.Merges, [3]uint32{li, ri, mi})
		}
		if t.Pipeline != nil {
			for i := range t.Tokens {
				if t.Tokens[i].Attr == mlt.AttrAdded {
					t.Pipeline.Added = append(t.Pipeline.Added, addedOptions(types[i]))
				}
			}
		}
	default:
		return nil, nil, errf("tokenizer.ggml.model", "tokenizer model %q is not supported (llama and gpt2 are)", model)
	}
	if addEOS {
		if t.EOS < 0 {
			return nil, nil, errf("tokenizer.ggml.add_eos_token", "is set but the vocabulary has no eos_token_id")
		}
		// llama.cpp appends EOS (Qwen3-Embedding GGUFs): a post-processor
		// template, BOS before the text when llama.cpp adds it too; a pair is
		// two such texts.
		var single []mlt.PostItem
		if t.Flags&mlt.FlagAddBOS != 0 {
			single = append(single, mlt.PostItem{Seq: mlt.PostSpecial, IDs: []int32{t.BOS}})
			t.Flags &^= mlt.FlagAddBOS
		}
		single = append(single, mlt.PostItem{Seq: mlt.PostSeqA}, mlt.PostItem{Seq: mlt.PostSpecial, IDs: []int32{t.EOS}})
		pair := slices.Clone(single)
		for _, it := range single {
			if it.Seq == mlt.PostSeqA {
				it.Seq = mlt.PostSeqB
			}
			pair = append(pair, it)
		}
		t.SetPost(&mlt.Post{Single: single, Pair: pair})
	}
	chat, err := ggufChat(f, t, toks, errf)
	if err != nil {
		return nil, nil, err
	}
	if chat != nil {
		t.SetChat(chat)
	}
	if err := t.Validate(); err != nil {
		return nil, nil, fmt.Errorf("convert: %s: the tokenizer does not validate: %w", path, err)
	}
	return t, warns, nil
}

// ggufChat reads tokenizer.chat_template (and the named
// tokenizer.chat_template.NAME) and the stop ids (EOS, EOT, EOM), as the chat
// section a Hugging Face conversion writes from tokenizer_config.json and
// generation_config.json.
func ggufChat(f *gguf.File, t *mlt.Tokenizer, toks []string, errf func(string, string, ...any) error) (*mlt.Chat, error) {
	c := &mlt.Chat{}
	if s, ok := f.String("tokenizer.chat_template"); ok {
		c.Templates = append(c.Templates, mlt.NamedTemplate{Name: "default", Source: s})
	}
	for _, kv := range f.KVs {
		name, ok := strings.CutPrefix(kv.Key, "tokenizer.chat_template.")
		if !ok {
			continue
		}
		s, ok := kv.Value.Str()
		if !ok {
			return nil, errf(kv.Key, "not a string")
		}
		c.Templates = append(c.Templates, mlt.NamedTemplate{Name: name, Source: s})
	}
	stop := []int32{}
	for _, key := range []string{"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"} {
		if v, ok := f.Lookup(key); ok {
			if n, ok := v.Int(); ok && n >= 0 && n < int64(len(toks)) && !containsID(stop, int32(n)) {
				stop = append(stop, int32(n))
			}
		}
	}
	if len(c.Templates) == 0 && len(stop) == 0 {
		return nil, nil
	}
	if t.BOS >= 0 {
		c.BOSToken = toks[t.BOS]
	}
	if t.EOS >= 0 {
		c.EOSToken = toks[t.EOS]
	}
	c.StopIDs = stop
	return c, nil
}

// addedOptions gives an added token's matching options: llama.cpp matches
// control and user-defined tokens literally, neither stripping nor
// normalizing; control tokens are special.
func addedOptions(typ int64) mlt.AddedOptions {
	if typ == ggufTokControl {
		return mlt.AddedSpecial
	}
	return 0
}

func padToken(id int) string { return "[PAD" + strconv.Itoa(id) + "]" }

func containsID(s []int32, id int32) bool {
	for _, x := range s {
		if x == id {
			return true
		}
	}
	return false
}

// byteToken parses a SentencePiece byte-fallback piece "<0xXX>".
func byteToken(s string) (byte, bool) {
	if len(s) != 6 || !strings.HasPrefix(s, "<0x") || s[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[3:5], 16, 8)
	return byte(v), err == nil
}

// spMerges derives BPE merges from SentencePiece scores as Hugging Face's
// SentencePieceExtractor does (transformers convert_slow_tokenizer.py): for
// each piece in id order, every split into two pieces of the vocabulary (by
// character), the splits of one piece ordered by the ids of their parts;
// then all merges ordered by the merged piece's score, highest first, a
// stable sort.
func spMerges(toks []string, scores []float32) [][3]uint32 {
	index := make(map[string]uint32, len(toks))
	for i, s := range toks {
		if _, dup := index[s]; !dup {
			index[s] = uint32(i)
		}
	}
	type merge struct {
		m     [3]uint32
		score float32
	}
	var all []merge
	for i, s := range toks {
		var local []merge
		for k := range s {
			if k == 0 {
				continue
			}
			l, r := s[:k], s[k:]
			li, ok1 := index[l]
			ri, ok2 := index[r]
			if ok1 && ok2 {
				local = append(local, merge{[3]uint32{li, ri, uint32(i)}, scores[i]})
			}
		}
		sort.SliceStable(local, func(a, b int) bool {
			if local[a].m[0] != local[b].m[0] {
				return local[a].m[0] < local[b].m[0]
			}
			return local[a].m[1] < local[b].m[1]
		})
		all = append(all, local...)
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
	out := make([][3]uint32, len(all))
	for i, m := range all {
		out[i] = m.m
	}
	return out
}

// The GPT-2 byte-to-character table (bytes_to_unicode): printable Latin-1
// bytes stand for themselves, the others for U+0100 onwards in byte order.
var byteOfRune, runeOfByte = func() (map[rune]byte, [256]rune) {
	m := map[rune]byte{}
	var r [256]rune
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
			r[b] = rune(b)
		} else {
			r[b] = rune(256 + n)
			n++
		}
		m[r[b]] = byte(b)
	}
	return m, r
}()

// byteLevelDecode turns a byte-level piece back into the bytes it stands for.
func byteLevelDecode(s string) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	for _, c := range s {
		b, ok := byteOfRune[c]
		if !ok || c == utf8.RuneError {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// byteLevelEncode is byteLevelDecode's inverse.
func byteLevelEncode(b []byte) string {
	var sb strings.Builder
	for _, x := range b {
		sb.WriteRune(runeOfByte[x])
	}
	return sb.String()
}
