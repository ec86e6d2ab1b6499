package store

import (
	"fmt"
	"path"
	"regexp"
	"sort"
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
	GGUF  string   // Kind GGUF: the file to import
	Type  string   // the store's type key: "q8_0", "q4_0", or the GGUF file's quant ("q4_k_m")
	Note  string   // what was chosen and why, for the user ("" when obvious)
}

// Choose picks what to download from a repo's file list for tag ("" for
// the default), before anything is downloaded: a checkpoint's config,
// tokenizer and safetensors (nothing else), or one GGUF file chosen as
// llama.cpp's -hf does. A repo with only pickle weights is refused by name.
func Choose(repo string, files []string, tag string) (*Choice, error) {
	var st, gg, pickles []string
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
		if strings.Contains(f, "/") {
			continue // convert reads the top folder only
		}
		switch ext := strings.ToLower(path.Ext(f)); {
		case ext == ".safetensors" && !strings.HasPrefix(f, "consolidated"):
			st = append(st, f)
		case ext == ".gguf":
			gg = append(gg, f)
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
		sort.Strings(c.Files)
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

var splitRe = regexp.MustCompile(`(?i)-(\d{5})-of-(\d{5})\.gguf$`)

// ggufPreference is the order without a tag: what convert imports
// losslessly first.
var ggufPreference = []string{"q4_0", "q8_0", "q4_k_m"}

func matchesTag(name, tag string) bool {
	n, t := strings.ToLower(name), strings.ToLower(tag)
	return strings.Contains(n, t+".") || strings.Contains(n, t+"-")
}

func chooseGGUF(repo string, files []string, tag string) (*Choice, error) {
	var cands []string
	for _, f := range files {
		l := strings.ToLower(f)
		if strings.Contains(l, "mmproj") || strings.Contains(l, "imatrix") || strings.Contains(l, "draft") {
			continue
		}
		if m := splitRe.FindStringSubmatch(f); m != nil && m[1] != "00001" {
			continue // a later part of a split file
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
	if splitRe.MatchString(pick) {
		return nil, fmt.Errorf("%s: %s is split into several files; convert imports single-file GGUF only (pick another tag)", repo, pick)
	}
	typ := strings.ToLower(tag)
	if typ == "" {
		typ = quantOf(pick)
	}
	return &Choice{Kind: GGUF, Files: []string{pick}, GGUF: pick, Type: typ, Note: note}, nil
}

var quantRe = regexp.MustCompile(`(?i)[-._]((?:i?q\d[a-z0-9_]*)|f16|bf16|f32)\.gguf$`)

// quantOf is the quant type in a GGUF file name ("q4_k_m"), or "gguf".
func quantOf(name string) string {
	if m := quantRe.FindStringSubmatch(name); m != nil {
		return strings.ToLower(m[1])
	}
	return "gguf"
}
