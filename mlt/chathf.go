package mlt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ReadHFChat reads what chat needs from a Hugging Face folder (or the folder of
// a tokenizer.json path), the way transformers finds it:
//
//   - the templates: chat_template.jinja when present (transformers ≥ 4.50
//     saves it there, with named ones in additional_chat_templates/NAME.jinja),
//     else chat_template.json's "chat_template" (processors), else
//     tokenizer_config.json's "chat_template": a string, or a list of
//     {"name", "template"} with "default" first;
//   - bos_token and eos_token of tokenizer_config.json (a string or an
//     {"content": ...} object; absent or null: none);
//   - the stop ids: generation_config.json's eos_token_id (an id or a list),
//     else config.json's, then tok's EOS; an id that is not one of tok's ids
//     is dropped, as transformers ignores it (ReadHFChatWarn says so).
//
// It returns nil, nil when the folder has neither a template nor stop ids in
// those files, so the tokenizer stays a plain SPEC.md one.
func ReadHFChat(path string, tok *Tokenizer) (*Chat, error) {
	return ReadHFChatWarn(path, tok, nil)
}

// ReadHFChatWarn is ReadHFChat, calling warn (when not nil) with a sentence
// for each stop id it drops, naming the file, the id and the vocabulary size.
func ReadHFChatWarn(path string, tok *Tokenizer, warn func(string)) (*Chat, error) {
	dir := path
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		dir = filepath.Dir(path)
	}
	c := &Chat{}
	tc := filepath.Join(dir, "tokenizer_config.json")
	if _, err := os.Stat(tc); err == nil {
		if c, err = ReadHFChatConfig(tc); err != nil {
			return nil, err
		}
	}
	ts, found, err := readTemplateFiles(dir)
	if err != nil {
		return nil, err
	}
	if found {
		c.Templates = ts
	}
	ids, err := readStopIDs(dir, len(tok.Tokens), warn)
	if err != nil {
		return nil, err
	}
	if len(c.Templates) == 0 && len(ids) == 0 {
		return nil, nil
	}
	if tok.EOS >= 0 && !slices.Contains(ids, tok.EOS) {
		ids = append(ids, tok.EOS)
	}
	c.StopIDs = ids
	return c, nil
}

// ReadHFChatConfig reads the templates ("chat_template": a string, or a list
// of {"name", "template"}) and the bos_token and eos_token strings (a string
// or an {"content": ...} object) of one tokenizer_config.json or
// chat_template.json. The result has no stop ids; it may have no template.
func ReadHFChatConfig(file string) (*Chat, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOSToken     json.RawMessage `json:"bos_token"`
		EOSToken     json.RawMessage `json:"eos_token"`
	}
	if _, err := readJSON(file, &cfg, true); err != nil {
		return nil, err
	}
	c := &Chat{BOSToken: tokenName(cfg.BOSToken), EOSToken: tokenName(cfg.EOSToken)}
	if len(cfg.ChatTemplate) > 0 && string(cfg.ChatTemplate) != "null" {
		var err error
		if c.Templates, err = parseTemplateValue(file, cfg.ChatTemplate); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// readJSON decodes file into v; false when the file does not exist (an
// error too when must is set).
func readJSON(file string, v any, must bool) (bool, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) && !must {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mlt: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("mlt: %s: invalid JSON: %w", file, err)
	}
	return true, nil
}

func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// readTemplateFiles reads the template files that take precedence over
// tokenizer_config.json's: chat_template.jinja (with additional_chat_templates/
// NAME.jinja), else chat_template.json's "chat_template".
func readTemplateFiles(dir string) ([]NamedTemplate, bool, error) {
	jf := filepath.Join(dir, "chat_template.jinja")
	src, ok, err := readTemplateFile(jf)
	if err != nil {
		return nil, false, err
	}
	if ok {
		ts := []NamedTemplate{{Name: "default", Source: src}}
		more, err := filepath.Glob(filepath.Join(dir, "additional_chat_templates", "*.jinja"))
		if err != nil {
			return nil, false, err
		}
		sort.Strings(more)
		for _, f := range more {
			src, _, err := readTemplateFile(f)
			if err != nil {
				return nil, false, err
			}
			ts = append(ts, NamedTemplate{Name: strings.TrimSuffix(filepath.Base(f), ".jinja"), Source: src})
		}
		ts, err = checkTemplates(jf, ts)
		return ts, true, err
	}
	jsonFile := filepath.Join(dir, "chat_template.json")
	if _, err := os.Stat(jsonFile); err != nil {
		return nil, false, nil
	}
	c, err := ReadHFChatConfig(jsonFile)
	if err != nil || len(c.Templates) == 0 {
		return nil, false, err
	}
	return c.Templates, true, nil
}

// readTemplateFile reads a .jinja file, refusing one above the .mlt limit.
func readTemplateFile(file string) (string, bool, error) {
	st, err := os.Stat(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("mlt: %w", err)
	}
	if st.Size() > MaxTemplateLen {
		return "", false, fmt.Errorf("mlt: %s: %d bytes, above the chat template limit of %d", file, st.Size(), MaxTemplateLen)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false, fmt.Errorf("mlt: %w", err)
	}
	return string(b), true, nil
}

// parseTemplateValue reads "chat_template": a string, or a list of
// {"name": ..., "template": ...}.
func parseTemplateValue(file string, raw json.RawMessage) ([]NamedTemplate, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return checkTemplates(file, []NamedTemplate{{Name: "default", Source: s}})
	}
	var list []struct {
		Name     *string `json:"name"`
		Template *string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("mlt: %s: chat_template must be a string or a list of {\"name\", \"template\"}, not %s", file, clip(raw))
	}
	ts := make([]NamedTemplate, 0, len(list))
	for i, e := range list {
		if e.Name == nil || e.Template == nil {
			return nil, fmt.Errorf("mlt: %s: chat_template[%d] needs a \"name\" and a \"template\" string", file, i)
		}
		ts = append(ts, NamedTemplate{Name: *e.Name, Source: *e.Template})
	}
	// The default first, as the .mlt section expects it.
	slices.SortStableFunc(ts, func(a, b NamedTemplate) int {
		return boolInt(b.Name == "default") - boolInt(a.Name == "default")
	})
	return checkTemplates(file, ts)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkTemplates applies the .mlt section's rules with the file's name.
func checkTemplates(file string, ts []NamedTemplate) ([]NamedTemplate, error) {
	if len(ts) > MaxChatTemplates {
		return nil, fmt.Errorf("mlt: %s: %d chat templates, more than the limit %d", file, len(ts), MaxChatTemplates)
	}
	seen := map[string]bool{}
	for i, t := range ts {
		if msg := checkTemplate(i, t, seen); msg != "" {
			return nil, fmt.Errorf("mlt: %s: chat %s", file, msg)
		}
	}
	return ts, nil
}

// readStopIDs reads eos_token_id from generation_config.json, else from
// config.json; an id outside 0..nVocab-1 is dropped, with a warning.
func readStopIDs(dir string, nVocab int, warn func(string)) ([]int32, error) {
	for _, name := range []string{"generation_config.json", "config.json"} {
		file := filepath.Join(dir, name)
		var g struct {
			EOS json.RawMessage `json:"eos_token_id"`
		}
		found, err := readJSON(file, &g, false)
		if err != nil {
			return nil, err
		}
		if !found || len(g.EOS) == 0 || string(g.EOS) == "null" {
			continue
		}
		var list []int64
		var one int64
		if json.Unmarshal(g.EOS, &one) == nil {
			list = []int64{one}
		} else if err := json.Unmarshal(g.EOS, &list); err != nil {
			return nil, fmt.Errorf("mlt: %s: eos_token_id must be an integer or a list of integers, not %s", file, clip(g.EOS))
		}
		if len(list) > MaxChatStopIDs {
			return nil, fmt.Errorf("mlt: %s: %d eos_token_id values, more than the limit %d", file, len(list), MaxChatStopIDs)
		}
		var ids []int32
		for _, id := range list {
			if id < 0 || id >= int64(nVocab) {
				if warn != nil {
					warn(fmt.Sprintf("%s: eos_token_id %d is not one of the tokenizer's %d ids (0..%d): dropped from the stop ids", file, id, nVocab, nVocab-1))
				}
				continue
			}
			if !slices.Contains(ids, int32(id)) {
				ids = append(ids, int32(id))
			}
		}
		return ids, nil
	}
	return nil, nil
}
