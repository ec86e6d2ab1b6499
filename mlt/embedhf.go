package mlt

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ReadHFEmbed reads the sentence-transformers files of the checkpoint folder
// dir (or the folder of a tokenizer.json path): modules.json (the module
// list: Transformer, Pooling, Normalize), the Pooling module's config.json
// (1_Pooling/config.json: the pooling mode) and
// config_sentence_transformers.json (prompts, default_prompt_name). It returns
// nil, nil when dir has none of them, so the tokenizer stays as it was; it
// refuses, naming the file and key, what krafla's pooling cannot reproduce:
// mean_sqrt_len or weightedmean pooling, several modes at once, cls pooling
// with include_prompt false, and modules other than those three (a Dense
// projection).
func ReadHFEmbed(dir string) (*Embed, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	var modules []struct {
		Type string `json:"type"`
		Path string `json:"path"`
	}
	mfile := filepath.Join(dir, "modules.json")
	haveModules, err := readJSON(mfile, &modules, false)
	if err != nil {
		return nil, err
	}
	var st struct {
		Prompts           map[string]string `json:"prompts"`
		DefaultPromptName *string           `json:"default_prompt_name"`
	}
	sfile := filepath.Join(dir, "config_sentence_transformers.json")
	haveST, err := readJSON(sfile, &st, false)
	if err != nil {
		return nil, err
	}
	poolDir := "1_Pooling"
	e := &Embed{Normalize: true}
	if haveModules {
		e.Normalize = false
		poolDir = ""
		for i, m := range modules {
			switch m.Type {
			case "sentence_transformers.models.Transformer":
			case "sentence_transformers.models.Pooling":
				poolDir = m.Path
			case "sentence_transformers.models.Normalize":
				e.Normalize = true
			default:
				return nil, fmt.Errorf("mlt: %s: module %d is %q; krafla pools with Transformer, Pooling and Normalize modules only", mfile, i, m.Type)
			}
		}
	}
	var pool map[string]any
	pfile := filepath.Join(dir, poolDir, "config.json")
	havePool := false
	if poolDir != "" {
		if havePool, err = readJSON(pfile, &pool, haveModules); err != nil {
			return nil, err
		}
	}
	if !haveModules && !haveST && !havePool {
		return nil, nil
	}
	if havePool {
		if e.Pooling, err = poolingMode(pool, pfile); err != nil {
			return nil, err
		}
		switch v, ok := pool["include_prompt"]; {
		case !ok || v == true:
		case v == false:
			if e.Pooling == PoolCLS {
				return nil, fmt.Errorf("mlt: %s: include_prompt false with cls pooling: sentence-transformers' code paths disagree on the token (the first, or the first after the prompt), so krafla does not guess", pfile)
			}
			e.ExcludePrompt = true
		default:
			return nil, fmt.Errorf("mlt: %s: include_prompt is %v, not a bool", pfile, v)
		}
	} else {
		// sentence-transformers' default for a plain Transformer model.
		e.Pooling = PoolMean
	}
	for name, text := range st.Prompts {
		e.Prompts = append(e.Prompts, NamedPrompt{name, text})
	}
	sort.Slice(e.Prompts, func(i, j int) bool { return e.Prompts[i].Name < e.Prompts[j].Name })
	if st.DefaultPromptName != nil {
		e.DefaultPrompt = *st.DefaultPromptName
	}
	if err := validateEmbed(e, -1); err != nil {
		return nil, fmt.Errorf("mlt: %s: %s", sfile, err.(*Error).Msg)
	}
	return e, nil
}

// poolModes are sentence-transformers' pooling modes krafla pools by: the
// names of the pooling_mode key (sentence-transformers 5) and the legacy
// pooling_mode_* bool keys.
var poolModes = []struct {
	name, key string
	mode      uint8
}{
	{"mean", "pooling_mode_mean_tokens", PoolMean},
	{"cls", "pooling_mode_cls_token", PoolCLS},
	{"lasttoken", "pooling_mode_lasttoken", PoolLast},
	{"max", "pooling_mode_max_tokens", PoolMax},
}

// poolingMode reads the mode of a Pooling module's config.json: the
// pooling_mode key (a name, or a list of one) where present, as
// sentence-transformers 5 writes it and reads it first, else the legacy
// pooling_mode_* keys (exactly one true; none of them at all is mean, the
// module's default). Several modes at once (their vectors concatenated) and
// modes krafla does not pool by are refused.
func poolingMode(pool map[string]any, pfile string) (uint8, error) {
	if v, ok := pool["pooling_mode"]; ok {
		name, isStr := v.(string)
		if l, isList := v.([]any); isList && len(l) == 1 {
			name, isStr = l[0].(string)
		} else if isList {
			return 0, fmt.Errorf("mlt: %s: pooling_mode %v: several modes at once (concatenated) are not supported", pfile, v)
		}
		if !isStr {
			return 0, fmt.Errorf("mlt: %s: pooling_mode is %v, not a mode name", pfile, v)
		}
		for _, m := range poolModes {
			if m.name == name {
				return m.mode, nil
			}
		}
		return 0, fmt.Errorf("mlt: %s: pooling_mode %q is not supported (mean, cls, lasttoken and max are)", pfile, name)
	}
	keys := make([]string, 0, len(pool))
	for k := range pool {
		if strings.HasPrefix(k, "pooling_mode_") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return PoolMean, nil
	}
	sort.Strings(keys)
	var mode uint8
	for _, k := range keys {
		v := pool[k]
		if v == false {
			continue
		}
		var m uint8
		for _, pm := range poolModes {
			if pm.key == k {
				m = pm.mode
			}
		}
		switch {
		case v != true:
			return 0, fmt.Errorf("mlt: %s: %s is %v, not a bool", pfile, k, v)
		case m == 0:
			return 0, fmt.Errorf("mlt: %s: %s is not supported (mean, cls, last-token and max pooling are)", pfile, k)
		case mode != 0:
			return 0, fmt.Errorf("mlt: %s: several pooling modes are set (%s and %s)", pfile, PoolName(mode), PoolName(m))
		}
		mode = m
	}
	if mode == 0 {
		return 0, fmt.Errorf("mlt: %s: no pooling_mode_* is true", pfile)
	}
	return mode, nil
}
