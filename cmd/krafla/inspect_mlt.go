package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/krafla/krafla/mlt"
)

func init() { inspectors["MLT1"], extensionMagic[".mlt"] = inspectMLT, "MLT1" }

// mltSample is how many tokens and merges inspect lists.
const mltSample = 8

type mltTokenJSON struct {
	ID    int    `json:"id"`
	Attr  string `json:"attr"`
	Piece string `json:"piece"`
}

type mltMergeJSON struct {
	Rank   int    `json:"rank"`
	Left   int    `json:"left"`
	Right  int    `json:"right"`
	Merged int    `json:"merged"`
	Text   string `json:"text"`
}

type mltJSON struct {
	Path       string         `json:"path"`
	FileKind   string         `json:"kind"` // "tokenizer", as "model" and "imatrix" for the other kinds
	Magic      string         `json:"magic"`
	Version    int            `json:"version"`
	Kind       int            `json:"tokenizer_kind"`
	KindName   string         `json:"tokenizer_kind_name"`
	Flags      uint32         `json:"flags"`
	FlagNames  []string       `json:"flag_names"`
	Vocab      int            `json:"n_vocab"`
	Normal     int            `json:"normal_tokens"`
	Added      int            `json:"added_tokens"`
	Byte       int            `json:"byte_tokens"`
	None       int            `json:"none_tokens,omitempty"` // ids without a token (pipeline files)
	Merges     int            `json:"n_merges"`
	BOS        int32          `json:"bos"`
	EOS        int32          `json:"eos"`
	StopTokens []int          `json:"stop_tokens"`
	Tokens     []mltTokenJSON `json:"sample_tokens"`
	AddedList  []mltTokenJSON `json:"sample_added_tokens"`
	MergeList  []mltMergeJSON `json:"sample_merges"`
	Chat       *mltChatJSON   `json:"chat,omitempty"`
	FIM        *mltFIMJSON    `json:"fim,omitempty"`
	Pair       string         `json:"pair_id,omitempty"` // the pair section: the model written with it
	Pipeline   *mltPipeJSON   `json:"pipeline,omitempty"`
	Post       *mltPostJSON   `json:"post_processor,omitempty"`
	Embedding  *mltEmbedJSON  `json:"embedding,omitempty"`
	AllTokens  []mltTokenJSON `json:"tokens,omitempty"` // with --tensors
	AllMerges  []mltMergeJSON `json:"merges,omitempty"` // with --tensors
}

// mltFIMJSON is the fill-in-the-middle format found by its sentinels
// (mlt.FIM); middle_id -1: none.
type mltFIMJSON struct {
	Family   string `json:"family"`
	Format   string `json:"format"`
	PrefixID int    `json:"prefix_id"`
	SuffixID int    `json:"suffix_id"`
	MiddleID int    `json:"middle_id"`
	StopIDs  []int  `json:"stop_ids"`
}

// mltChatJSON is the chat section; template sources only with --tensors.
type mltChatJSON struct {
	Templates []mltTemplateJSON `json:"templates"`
	BOSToken  string            `json:"bos_token"`
	EOSToken  string            `json:"eos_token"`
	StopIDs   []int32           `json:"stop_ids"`
}

// mltPipeJSON is the pipeline section: each step described as
// tokenizer.json names it, and how many added tokens have each option.
type mltPipeJSON struct {
	Normalizers   []string       `json:"normalizers"`
	PreTokenizers []string       `json:"pre_tokenizers"`
	Unk           int32          `json:"unk"`
	FuseUnk       bool           `json:"fuse_unk"`
	DecodeStrip   uint8          `json:"decode_strip"`
	DecodeBytes   bool           `json:"decode_bytes"`
	AddedOptions  map[string]int `json:"added_options"`
}

func pipelineJSON(p *mlt.Pipeline) *mltPipeJSON {
	j := &mltPipeJSON{Normalizers: []string{}, PreTokenizers: []string{}, Unk: p.Unk, FuseUnk: p.FuseUnk,
		DecodeStrip: p.DecodeStrip, DecodeBytes: p.DecodeBytes, AddedOptions: map[string]int{}}
	for _, s := range p.Normalizers {
		j.Normalizers = append(j.Normalizers, s.String())
	}
	for _, s := range p.PreTokenizers {
		j.PreTokenizers = append(j.PreTokenizers, s.String())
	}
	for _, o := range p.Added {
		for _, b := range []struct {
			bit  mlt.AddedOptions
			name string
		}{{mlt.AddedLStrip, "lstrip"}, {mlt.AddedRStrip, "rstrip"}, {mlt.AddedSingleWord, "single_word"},
			{mlt.AddedNormalized, "normalized"}, {mlt.AddedSpecial, "special"}} {
			if o&b.bit != 0 {
				j.AddedOptions[b.name]++
			}
		}
	}
	return j
}

type mltTemplateJSON struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	Source string `json:"source,omitempty"`
}

// chatTemplateNames describes a chat section's templates in one phrase.
func chatTemplateNames(c *mlt.Chat) string {
	if len(c.Templates) == 0 {
		return "no template"
	}
	parts := make([]string, len(c.Templates))
	for i, t := range c.Templates {
		parts[i] = fmt.Sprintf("%s (%d bytes)", t.Name, len(t.Source))
	}
	return fmt.Sprintf("%d template(s): %s", len(c.Templates), strings.Join(parts, ", "))
}

var attrNames = []string{"normal", "added", "byte", "none"}

// piece shows a token's bytes readably: quoted Go syntax for non-byte
// tokens, <0xXX> for byte tokens.
func piece(tok mlt.Token) string {
	if tok.Attr == mlt.AttrByte {
		return fmt.Sprintf("<0x%02X>", tok.Bytes[0])
	}
	return strconv.Quote(string(tok.Bytes))
}

func inspectMLT(path string, opt inspectOptions, out io.Writer) error {
	t, err := mlt.Open(path)
	if err != nil {
		code := "ML_E_FORMAT"
		if errors.Is(err, mlt.ErrIO) {
			code = "ML_E_IO"
		}
		return fmt.Errorf("%s: %w", code, err)
	}
	j := mltJSON{
		Path: path, FileKind: "tokenizer", Magic: "MLT1", Version: 1, Kind: int(t.Kind), KindName: t.Kind.String(),
		Flags: t.Flags, FlagNames: mlt.FlagNames(t.Flags), Vocab: len(t.Tokens), Merges: len(t.Merges),
		BOS: t.BOS, EOS: t.EOS, StopTokens: t.StopTokens(),
	}
	if j.FlagNames == nil {
		j.FlagNames = []string{}
	}
	if f, ok := t.FIM(); ok {
		j.FIM = &mltFIMJSON{Family: f.Family, Format: f.Format, PrefixID: f.Pre, SuffixID: f.Suf, MiddleID: f.Mid, StopIDs: f.Stops}
		if j.FIM.StopIDs == nil {
			j.FIM.StopIDs = []int{}
		}
	}
	if t.Flags&mlt.FlagPair != 0 {
		j.Pair = hex.EncodeToString(t.Pair[:])
	}
	if t.Pipeline != nil {
		j.Pipeline = pipelineJSON(t.Pipeline)
	}
	if p := t.Post; p != nil {
		j.Post = &mltPostJSON{Single: postTemplate(t, p.Single), Pair: postTemplate(t, p.Pair)}
	}
	if e := t.Embed; e != nil {
		j.Embedding = &mltEmbedJSON{Pooling: mlt.PoolName(e.Pooling), Normalize: e.Normalize, ExcludePrompt: e.ExcludePrompt, Prompts: map[string]string{},
			DefaultPrompt: e.DefaultPrompt}
		for _, p := range e.Prompts {
			j.Embedding.Prompts[p.Name] = p.Text
		}
	}
	if c := t.Chat; c != nil {
		j.Chat = &mltChatJSON{Templates: []mltTemplateJSON{}, BOSToken: c.BOSToken, EOSToken: c.EOSToken, StopIDs: c.StopIDs}
		for _, nt := range c.Templates {
			e := mltTemplateJSON{Name: nt.Name, Bytes: len(nt.Source)}
			if opt.Tensors {
				e.Source = nt.Source
			}
			j.Chat.Templates = append(j.Chat.Templates, e)
		}
		if j.Chat.StopIDs == nil {
			j.Chat.StopIDs = []int32{}
		}
	}
	merge := func(i int, m [3]uint32) mltMergeJSON {
		return mltMergeJSON{Rank: i, Left: int(m[0]), Right: int(m[1]), Merged: int(m[2]),
			Text: piece(t.Tokens[m[0]]) + " + " + piece(t.Tokens[m[1]]) + " → " + piece(t.Tokens[m[2]])}
	}
	for id, tok := range t.Tokens {
		e := mltTokenJSON{ID: id, Attr: attrNames[tok.Attr], Piece: piece(tok)}
		if opt.Tensors {
			j.AllTokens = append(j.AllTokens, e)
		}
		switch tok.Attr {
		case mlt.AttrNormal:
			j.Normal++
			if len(j.Tokens) < mltSample && len(tok.Bytes) > 1 {
				j.Tokens = append(j.Tokens, e)
			}
		case mlt.AttrAdded:
			j.Added++
			if len(j.AddedList) < mltSample {
				j.AddedList = append(j.AddedList, e)
			}
		case mlt.AttrByte:
			j.Byte++
		case mlt.AttrNone:
			j.None++
		}
	}
	for i, m := range t.Merges[:min(mltSample, len(t.Merges))] {
		j.MergeList = append(j.MergeList, merge(i, m))
	}
	if opt.Tensors {
		j.AllMerges = make([]mltMergeJSON, len(t.Merges))
		for i, m := range t.Merges {
			j.AllMerges[i] = merge(i, m)
		}
	}
	if opt.JSON {
		e := json.NewEncoder(out)
		e.SetIndent("", "  ")
		return e.Encode(j)
	}
	name := func(id int32) string {
		if id < 0 {
			return "none"
		}
		return fmt.Sprintf("%d %s", id, piece(t.Tokens[id]))
	}
	flags := strings.Join(j.FlagNames, ", ")
	if flags == "" {
		flags = "none"
	}
	stops := make([]string, len(j.StopTokens))
	for i, id := range j.StopTokens {
		stops[i] = name(int32(id))
	}
	fmt.Fprintf(out, "%s: valid .mlt tokenizer (MLT1 version 1), %s, %d tokens\n", path, j.KindName, j.Vocab)
	fmt.Fprintf(out, "  kind         %d (%s)\n", j.Kind, j.KindName)
	fmt.Fprintf(out, "  flags        %d (%s)\n", j.Flags, flags)
	none := ""
	if j.None > 0 {
		none = fmt.Sprintf(", %d ids without a token", j.None)
	}
	fmt.Fprintf(out, "  tokens       %d (%d normal, %d added, %d byte%s)\n", j.Vocab, j.Normal, j.Added, j.Byte, none)
	fmt.Fprintf(out, "  merges       %d\n", j.Merges)
	fmt.Fprintf(out, "  bos          %s\n", name(t.BOS))
	fmt.Fprintf(out, "  eos          %s\n", name(t.EOS))
	fmt.Fprintf(out, "  stop tokens  %s\n", strings.Join(stops, ", "))
	if f := j.FIM; f != nil {
		fstops := make([]string, len(f.StopIDs))
		for i, id := range f.StopIDs {
			fstops[i] = name(int32(id))
		}
		if len(fstops) == 0 {
			fstops = []string{"none"}
		}
		fmt.Fprintf(out, "  fim          %s: %s (infill stops %s)\n", f.Family, f.Format, strings.Join(fstops, ", "))
	}
	if p := j.Pipeline; p != nil {
		none := func(l []string) string {
			if len(l) == 0 {
				return "none"
			}
			return strings.Join(l, ", ")
		}
		fmt.Fprintf(out, "  normalizers  %s\n", none(p.Normalizers))
		fmt.Fprintf(out, "  pre-tokens   %s\n", none(p.PreTokenizers))
		if t.Kind == mlt.KindSentencePiece {
			bytes := "byte tokens as bytes"
			if !p.DecodeBytes {
				bytes = "byte tokens as their <0xXX> text"
			}
			fmt.Fprintf(out, "  unk          %s (fuse_unk %v)\n", name(p.Unk), p.FuseUnk)
			fmt.Fprintf(out, "  decoder      strips %d leading space(s), %s\n", p.DecodeStrip, bytes)
		}
		opts := make([]string, 0, len(p.AddedOptions))
		for _, k := range []string{"special", "normalized", "lstrip", "rstrip", "single_word"} {
			if n := p.AddedOptions[k]; n > 0 {
				opts = append(opts, fmt.Sprintf("%d %s", n, k))
			}
		}
		fmt.Fprintf(out, "  added opts   %s\n", none(opts))
	}
	if p := j.Post; p != nil {
		fmt.Fprintf(out, "  post single  %s\n", p.Single)
		fmt.Fprintf(out, "  post pair    %s\n", p.Pair)
	}
	if e := j.Embedding; e != nil {
		norm := "L2-normalized"
		if !e.Normalize {
			norm = "not normalized"
		}
		if e.ExcludePrompt {
			norm += ", prompt tokens not pooled"
		}
		fmt.Fprintf(out, "  embedding    %s pooling, %s\n", e.Pooling, norm)
		for _, p := range t.Embed.Prompts {
			def := ""
			if p.Name == e.DefaultPrompt {
				def = " (default)"
			}
			fmt.Fprintf(out, "  prompt       %s%s: %q\n", p.Name, def, p.Text)
		}
	}
	if c := t.Chat; c != nil {
		ids := make([]string, len(c.StopIDs))
		for i, id := range c.StopIDs {
			ids[i] = name(id)
		}
		fmt.Fprintf(out, "  chat         %s\n", chatTemplateNames(c))
		fmt.Fprintf(out, "  chat tokens  bos_token %q, eos_token %q\n", c.BOSToken, c.EOSToken)
		fmt.Fprintf(out, "  chat stops   %s\n", strings.Join(ids, ", "))
	}
	if j.Pair != "" {
		fmt.Fprintf(out, "  pair_id      %s (the model written with this tokenizer has it)\n", j.Pair)
	}
	fmt.Fprintf(out, "sample tokens:\n")
	for _, e := range j.Tokens {
		fmt.Fprintf(out, "  %8d  %s\n", e.ID, e.Piece)
	}
	if len(j.AddedList) > 0 {
		fmt.Fprintf(out, "added tokens (first %d of %d):\n", len(j.AddedList), j.Added)
		for _, e := range j.AddedList {
			fmt.Fprintf(out, "  %8d  %s\n", e.ID, e.Piece)
		}
	}
	if len(j.MergeList) > 0 {
		fmt.Fprintf(out, "merges (first %d of %d, by rank):\n", len(j.MergeList), j.Merges)
		for _, m := range j.MergeList {
			fmt.Fprintf(out, "  %8d  %s\n", m.Rank, m.Text)
		}
	}
	if opt.Tensors {
		w := bufio.NewWriter(out)
		if t.Chat != nil {
			for _, nt := range t.Chat.Templates {
				fmt.Fprintf(w, "chat template %s (%d bytes):\n%s\n", nt.Name, len(nt.Source), nt.Source)
			}
		}
		fmt.Fprintf(w, "tokens (%d):\n", len(j.AllTokens))
		for _, e := range j.AllTokens {
			fmt.Fprintf(w, "  %8d  %-6s  %s\n", e.ID, e.Attr, e.Piece)
		}
		fmt.Fprintf(w, "merges (%d, by rank):\n", len(j.AllMerges))
		for _, m := range j.AllMerges {
			fmt.Fprintf(w, "  %8d  %s\n", m.Rank, m.Text)
		}
		return w.Flush()
	}
	return nil
}

// mltPostJSON is the post-processor section, each template as
// tokenizer.json writes it ("$A <|endoftext|>").
type mltPostJSON struct {
	Single string `json:"single"`
	Pair   string `json:"pair"`
}

// mltEmbedJSON is the embedding section.
type mltEmbedJSON struct {
	Pooling       string            `json:"pooling"`
	Normalize     bool              `json:"normalize"`
	ExcludePrompt bool              `json:"exclude_prompt,omitempty"` // include_prompt false
	Prompts       map[string]string `json:"prompts"`
	DefaultPrompt string            `json:"default_prompt,omitempty"`
}

// postTemplate spells a template as the tokenizers library's string form:
// $A, $B and the special tokens' pieces (several ids joined by "+").
func postTemplate(t *mlt.Tokenizer, items []mlt.PostItem) string {
	parts := make([]string, len(items))
	for i, it := range items {
		switch it.Seq {
		case mlt.PostSeqA:
			parts[i] = "$A"
		case mlt.PostSeqB:
			parts[i] = "$B"
		default:
			ps := make([]string, len(it.IDs))
			for k, id := range it.IDs {
				ps[k] = piece(t.Tokens[id])
			}
			parts[i] = strings.Join(ps, "+")
		}
	}
	return strings.Join(parts, " ")
}
