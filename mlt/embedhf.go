package mlt

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// ReadHFEmbed reads the sentence-transformers files of the checkpoint folder
// dir (or the folder of a tokenizer.json path): modules.json (the module
// list: Transformer, Pooling, Normalize), the Pooling module's config.json
// (1_Pooling/config.json: the pooling mode) and
// config_sentence_transformers.json (prompts, default_prompt_name). It returns
// nil, nil when dir has none of them, so the tokenizer stays as it was; it
// refuses, naming the file and key, what krafla's pooling cannot reproduce:
// max, mean_sqrt_len or weightedmean pooling, several modes at once,
// include_prompt false, and modules other than those three (a Dense
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
		if v, ok := pool["include_prompt"]; ok && v != true {
			return nil, fmt.Errorf("mlt: %s: include_prompt %v: krafla pools over the prompt's tokens too", pfile, v)
		}
		modes := map[string]uint8{"pooling_mode_mean_tokens": PoolMean, "pooling_mode_cls_token": PoolCLS, "pooling_mode_lasttoken": PoolLast}
		keys := make([]string, 0, len(pool))
		for k := range pool {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := pool[k]
			if len(k) < len("pooling_mode_") || k[:len("pooling_mode_")] != "pooling_mode_" || v == false {
				continue
			}
			m, known := modes[k]
			switch {
			case v != true:
				return nil, fmt.Errorf("mlt: %s: %s is %v, not a bool", pfile, k, v)
			case !known:
				return nil, fmt.Errorf("mlt: %s: %s is not supported (mean, cls and last-token pooling are)", pfile, k)
			case e.Pooling != 0:
				return nil, fmt.Errorf("mlt: %s: several pooling modes are set (%s and %s)", pfile, PoolName(e.Pooling), PoolName(m))
			}
			e.Pooling = m
		}
		if e.Pooling == 0 {
			return nil, fmt.Errorf("mlt: %s: no pooling_mode_* is true", pfile)
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
