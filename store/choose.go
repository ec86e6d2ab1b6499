package store

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// checkpointExtras are the files convert reads beside the weights.
var checkpointExtras = []string{"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
	"chat_template.jinja", "chat_template.json", "special_tokens_map.json", "model.safetensors.index.json"}

// pickleExts are weights convert never opens (loading a pickle runs code).
var pickleExts = map[string]bool{".bin": true, ".pt": true, ".pth": true, ".ckpt": true, ".pkl": true}

// Kind is what a repo holds for krafla.
type Kind int

const (
	Checkpoint Kind = iota + 1 // config.json and safetensors: converted
	GGUF                       // .gguf files: one is imported
)

// Choice is the files to download from a repo and how to convert them.
type Choice struct {
	Kind  Kind
	Files []string // to download, sorted
	GGUF  string   // Kind GGUF: the file to import (a split set's first)
	Type  string   // the store's type key: "q8_0", "q4_0", or the GGUF file's quant ("q4_k_m")
	Note  string   // what was chosen and why, for the user ("" when obvious)
}

// Choose picks what to download from a repo's file list for tag ("" for
// the default), before anything is downloaded: a checkpoint's config,
// tokenizer and safetensors (nothing else), or one GGUF file (with the
// other files of its split set) chosen as llama.cpp's -hf does. A repo with
// only pickle weights is refused by name. Shards named as transformers
// names them (model-00002-of-00004.safetensors) bring the whole set and its
// index into Files, listed or not: a cache holding only some of them (an
// interrupted download) lacks the others.
func Choose(repo string, files []string, tag string) (*Choice, error) {
	var st, gg, pickles []string
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
		ext := strings.ToLower(path.Ext(f))
		if ext == ".gguf" {
			gg = append(gg, f) // in a subfolder too, as llama.cpp's -hf finds them
			continue
		}
		if strings.Contains(f, "/") {
			continue // convert reads a checkpoint's top folder only
		}
		switch {
		case ext == ".safetensors" && !strings.HasPrefix(f, "consolidated"):
			st = append(st, f)
		case pickleExts[ext]:
			pickles = append(pickles, f)
		}
	}
	if len(st) > 0 && has["config.json"] {
		typ := strings.ToLower(tag)
		switch typ {
		case "", "q8_0", "q8":
			typ = "q8_0"
		case "q4_0", "q4":
			typ = "q4_0"
		default:
			return nil, fmt.Errorf("%s:%s: a safetensors checkpoint is converted to q8_0 (default) or q4_0; tag %q is neither", repo, tag, tag)
		}
		c := &Choice{Kind: Checkpoint, Type: typ, Files: st}
		for _, f := range checkpointExtras {
			if has[f] {
				c.Files = append(c.Files, f)
			}
		}
		c.Files = append(c.Files, shardSets(st)...)
		c.Files = uniqueSorted(c.Files)
		return c, nil
	}
	if len(gg) > 0 {
		return chooseGGUF(repo, gg, tag)
	}
	if len(pickles) > 0 {
		return nil, fmt.Errorf("%s has only PyTorch pickle weights (%s): krafla never opens those (loading a pickle can run code); look for a safetensors or -GGUF version of the model, or convert it to safetensors yourself", repo, strings.Join(pickles, ", "))
	}
	if len(st) > 0 {
		return nil, fmt.Errorf("%s has safetensors but no config.json: not a transformers checkpoint convert can read", repo)
	}
	return nil, fmt.Errorf("%s has no safetensors checkpoint (config.json + *.safetensors) and no .gguf file", repo)
}

// shardRe is a transformers shard name: PREFIX-NNNNN-of-MMMMM.safetensors
// (save_pretrained's {prefix}-{i:05d}-of-{n:05d}, with the index
// PREFIX.safetensors.index.json).
var shardRe = regexp.MustCompile(`^(.+)-(\d{5})-of-(\d{5})\.safetensors$`)

// shardSets is every shard and index the shards' names imply: for
// model-00001-of-00003.safetensors, model-0000{1,2,3}-of-00003.safetensors
// and model.safetensors.index.json.
func shardSets(st []string) []string {
	var out []string
	done := map[string]bool{}
	for _, f := range st {
		m := shardRe.FindStringSubmatch(f)
		if m == nil || done[m[1]+m[3]] {
			continue
		}
		done[m[1]+m[3]] = true
		n, _ := strconv.Atoi(m[3])
		if n < 2 || n > 9999 {
			continue // a bound on what a name can make us ask for
		}
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("%s-%05d-of-%s.safetensors", m[1], i, m[3]))
		}
		out = append(out, m[1]+".safetensors.index.json")
	}
	return out
}

// IndexedShards adds to a checkpoint choice the shards its
// model.safetensors.index.json (the bytes b) maps tensors to, so that a
// cache holding the index but not every shard says which it lacks.
func (c *Choice) IndexedShards(b []byte) error {
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return fmt.Errorf("model.safetensors.index.json: %w", err)
	}
	for _, f := range idx.WeightMap {
		if path.Base(f) == f && strings.HasSuffix(f, ".safetensors") {
			c.Files = append(c.Files, f)
		}
	}
	c.Files = uniqueSorted(c.Files)
	return nil
}

func uniqueSorted(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// splitRe is llama.cpp's split file name (common/download.cpp,
// get_gguf_split_info): PREFIX-NNNNN-of-MMMMM.gguf, any case.
var splitRe = regexp.MustCompile(`(?i)^(.+)-(\d{5})-of-(\d{5})\.gguf$`)

// ggufPreference is the order without a tag: llama.cpp's -hf order
// (common/download.cpp, find_best_model: Q4_K_M, then Q8_0), both imported
// bit for bit, then Q4_0; else the first file.
var ggufPreference = []string{"q4_k_m", "q8_0", "q4_0"}

// notModel marks the .gguf files that are not a model to run: llama.cpp's
// gguf_filename_is_model, and draft models.
var notModel = []string{"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-", "draft"}

func matchesTag(name, tag string) bool {
	n, t := strings.ToLower(name), strings.ToLower(tag)
	return strings.Contains(n, t+".") || strings.Contains(n, t+"-")
}

func chooseGGUF(repo string, files []string, tag string) (*Choice, error) {
	var cands []string
	for _, f := range files {
		base := strings.ToLower(path.Base(f))
		skip := false
		for _, w := range notModel {
			skip = skip || strings.Contains(base, w)
		}
		if skip {
			continue
		}
		if m := splitRe.FindStringSubmatch(f); m != nil && m[2] != "00001" {
			continue // a later part of a split set: chosen with its first
		}
		cands = append(cands, f)
	}
	sort.Strings(cands)
	if len(cands) == 0 {
		return nil, fmt.Errorf("%s: no model .gguf file (only %s)", repo, strings.Join(files, ", "))
	}
	pick, note := "", ""
	if tag != "" {
		for _, f := range cands {
			if matchesTag(f, tag) {
				pick = f
				break
			}
		}
		if pick == "" {
			return nil, fmt.Errorf("%s: no .gguf file matches tag %q; the repo has %s", repo, tag, strings.Join(cands, ", "))
		}
	} else {
		for _, p := range ggufPreference {
			for _, f := range cands {
				if matchesTag(f, p) {
					pick = f
					break
				}
			}
			if pick != "" {
				break
			}
		}
		if pick == "" {
			pick = cands[0]
		}
		note = fmt.Sprintf("chose %s (of %d .gguf files; give :TAG, e.g. :Q8_0, for another)", pick, len(cands))
	}
	c := &Choice{Kind: GGUF, Files: []string{pick}, GGUF: pick, Type: strings.ToLower(tag)}
	name := pick
	if m := splitRe.FindStringSubmatch(pick); m != nil {
		set, err := splitSet(repo, files, m[1], m[3])
		if err != nil {
			return nil, err
		}
		c.Files, name = set, m[1]+".gguf"
		if note != "" {
			note = fmt.Sprintf("chose %s, split into %d files (of %d .gguf models; give :TAG, e.g. :Q8_0, for another)", m[1]+".gguf", len(set), len(cands))
		}
	}
	if c.Type == "" {
		c.Type = quantOf(name)
	}
	c.Note = note
	return c, nil
}

// splitSet is every file of the split set PREFIX-*-of-COUNT.gguf, in order
// (llama.cpp's get_split_files: same prefix, same count), the ones the
// listing lacks included: hub.Pull names them (the repo lacks them, or
// offline, the cache), before any download.
func splitSet(repo string, files []string, prefix, count string) ([]string, error) {
	n, _ := strconv.Atoi(count)
	if n < 1 || n > 9999 { // a bound on what a name can make us ask for
		return nil, fmt.Errorf("%s: %s-00001-of-%s.gguf: a split set of %d files", repo, prefix, count, n)
	}
	byNo := map[int]string{}
	for _, f := range files {
		if m := splitRe.FindStringSubmatch(f); m != nil && m[1] == prefix && m[3] == count {
			i, _ := strconv.Atoi(m[2])
			byNo[i] = f
		}
	}
	var set []string
	for i := 1; i <= n; i++ {
		f, ok := byNo[i]
		if !ok {
			f = fmt.Sprintf("%s-%05d-of-%s.gguf", prefix, i, count)
		}
		set = append(set, f)
	}
	return set, nil
}

var quantRe = regexp.MustCompile(`(?i)[-._]((?:i?q\d[a-z0-9_]*)|f16|bf16|f32)\.gguf$`)

// quantOf is the quant type in a GGUF file name ("q4_k_m"), or "gguf".
func quantOf(name string) string {
	if m := quantRe.FindStringSubmatch(name); m != nil {
		return strings.ToLower(m[1])
	}
	return "gguf"
}
