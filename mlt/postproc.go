package mlt

import (
	"encoding/binary"
	"fmt"
)

// Post is a TemplateProcessing post-processor (flag 2048; docs/FORMATS.md,
// "Post-processor section"): the special tokens that encoding with
// add-special-tokens puts around one text (Single) or a pair (Pair), as the
// tokenizers library applies them. A tokenizer whose post-processor the
// flags describe (none, or BOS before the text with flag 1) has none.
type Post struct {
	Single []PostItem // exactly one SeqA, no SeqB
	Pair   []PostItem // exactly one SeqA and one SeqB
}

// PostItem is one piece of a template: a sequence, or a special token's ids.
type PostItem struct {
	Seq uint8   // PostSpecial, PostSeqA or PostSeqB
	IDs []int32 // PostSpecial: the ids it stands for (tokenizer.json's special_tokens ids)
}

// PostItem kinds.
const (
	PostSpecial = 0
	PostSeqA    = 1
	PostSeqB    = 2
)

// Limits of the post-processor section. Real templates have two to five
// items, and a special token is one id.
const (
	postVersion     = 1
	MaxPostItems    = 64
	MaxPostTokenIDs = 64
)

// SetPost attaches p (nil removes the section) and sets FlagPost to match.
func (t *Tokenizer) SetPost(p *Post) {
	t.Post = p
	if p == nil {
		t.Flags &^= FlagPost
	} else {
		t.Flags |= FlagPost
	}
}

// validatePost checks p against the section's rules for nVocab tokens.
func validatePost(p *Post, nVocab int, off int64) error {
	for _, tpl := range []struct {
		name  string
		items []PostItem
		b     int
	}{{"single", p.Single, 0}, {"pair", p.Pair, 1}} {
		if len(tpl.items) > MaxPostItems {
			return formatErr(off, "post-processor section: %s template has %d items, more than the limit %d", tpl.name, len(tpl.items), MaxPostItems)
		}
		var na, nb int
		for i, it := range tpl.items {
			switch it.Seq {
			case PostSeqA:
				na++
			case PostSeqB:
				nb++
			case PostSpecial:
				if len(it.IDs) == 0 || len(it.IDs) > MaxPostTokenIDs {
					return formatErr(off, "post-processor section: %s item %d: %d ids, want 1..%d", tpl.name, i, len(it.IDs), MaxPostTokenIDs)
				}
				for _, id := range it.IDs {
					if id < 0 || int(id) >= nVocab {
						return formatErr(off, "post-processor section: %s item %d: id %d outside the vocabulary of %d tokens", tpl.name, i, id, nVocab)
					}
				}
			default:
				return formatErr(off, "post-processor section: %s item %d: unknown kind %d", tpl.name, i, it.Seq)
			}
			if it.Seq != PostSpecial && len(it.IDs) != 0 {
				return formatErr(off, "post-processor section: %s item %d: a sequence has no ids", tpl.name, i)
			}
		}
		if na != 1 || nb != tpl.b {
			return formatErr(off, "post-processor section: %s template holds $A %d times and $B %d times, want %d and %d", tpl.name, na, nb, 1, tpl.b)
		}
	}
	return nil
}

func parsePostSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	if version != postVersion {
		return formatErr(off-4, "post-processor section version %d is not supported (this reader knows %d)", version, postVersion)
	}
	at := 0
	var err error
	fail := func(format string, args ...any) {
		if err == nil {
			err = formatErr(off+int64(at), "post-processor section: "+format, args...)
		}
	}
	u32 := func(what string) uint32 {
		if err != nil {
			return 0
		}
		if len(p)-at < 4 {
			fail("%s: the payload ends (%d bytes left, need 4)", what, len(p)-at)
			return 0
		}
		v := binary.LittleEndian.Uint32(p[at:])
		at += 4
		return v
	}
	// count reads a count of at most limit items of at least size bytes.
	count := func(what string, limit, size int) int {
		n := u32(what)
		if err != nil {
			return 0
		}
		if uint64(n) > uint64(limit) || uint64(n)*uint64(size) > uint64(len(p)-at) {
			at -= 4
			fail("%s %d above the limit %d or the %d bytes left", what, n, limit, len(p)-at-4)
			return 0
		}
		return int(n)
	}
	items := func(name string) []PostItem {
		n := count(name+" item count", MaxPostItems, 1)
		if err != nil || n == 0 {
			return nil
		}
		out := make([]PostItem, n)
		for i := range out {
			if at >= len(p) {
				fail("%s item %d: the payload ends", name, i)
				return nil
			}
			out[i].Seq = p[at]
			if out[i].Seq > PostSeqB {
				fail("%s item %d: unknown kind %d", name, i, out[i].Seq)
				return nil
			}
			at++
			if out[i].Seq == PostSpecial {
				m := count(fmt.Sprintf("%s item %d id count", name, i), MaxPostTokenIDs, 4)
				if m > 0 {
					out[i].IDs = make([]int32, m)
					for j := range out[i].IDs {
						out[i].IDs[j] = int32(u32("id"))
					}
				}
			}
			if err != nil {
				return nil
			}
		}
		return out
	}
	pp := &Post{}
	pp.Single = items("single")
	pp.Pair = items("pair")
	if err != nil {
		return err
	}
	if at != len(p) {
		return formatErr(off+int64(at), "post-processor section: %d bytes after the pair template", len(p)-at)
	}
	if err := validatePost(pp, len(t.Tokens), off); err != nil {
		return err
	}
	t.Post = pp
	return nil
}

func appendPostSection(t *Tokenizer, b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, postVersion)
	for _, items := range [][]PostItem{t.Post.Single, t.Post.Pair} {
		b = le.AppendUint32(b, uint32(len(items)))
		for _, it := range items {
			b = append(b, it.Seq)
			if it.Seq == PostSpecial {
				b = le.AppendUint32(b, uint32(len(it.IDs)))
				for _, id := range it.IDs {
					b = le.AppendUint32(b, uint32(id))
				}
			}
		}
	}
	return b
}

func checkPostSection(t *Tokenizer) error {
	return validatePost(t.Post, len(t.Tokens), -1)
}

// EncodePair returns the ids of the pair (a, b) in the order of the
// post-processor's pair template, with its special tokens when addSpecial is
// set (the tokenizers library keeps the template's order of $A and $B
// without them too). A tokenizer without a post-processor section encodes
// the pair as a then b, each as Encode does (BOS before each with flag 1),
// which is what the tokenizers library does with the templates such files
// came from.
func (t *Tokenizer) EncodePair(a, b string, addSpecial bool) []int {
	if t.Post == nil {
		return t.AppendEncode(t.Encode(a, addSpecial), b, addSpecial)
	}
	t.prepare()
	out := make([]int, 0, (len(a)+len(b))/3+8)
	for _, it := range t.Post.Pair {
		switch it.Seq {
		case PostSeqA:
			out = t.appendText(out, a)
		case PostSeqB:
			out = t.appendText(out, b)
		default:
			if addSpecial {
				for _, id := range it.IDs {
					out = append(out, int(id))
				}
			}
		}
	}
	return out
}

// appendSingle appends text with the single template's special tokens.
func (t *Tokenizer) appendSingle(out []int, text string) []int {
	for _, it := range t.Post.Single {
		if it.Seq == PostSeqA {
			out = t.appendText(out, text)
			continue
		}
		for _, id := range it.IDs {
			out = append(out, int(id))
		}
	}
	return out
}
