package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/jinja"
	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newTemplateCmd) }

type templateOptions struct {
	Input string // VARS.json, "-" for stdin
	Date  string // YYYY-MM-DD for strftime_now
	Name  string // a named template of a tokenizer_config.json or .mlt
	Tools bool   // print the detected tool-call format
	Parse string // OUTPUT.txt: print the assistant message parsed from it
}

func newTemplateCmd() *cobra.Command {
	var o templateOptions
	c := &cobra.Command{
		Use:   "template SOURCE --input VARS.json [--date YYYY-MM-DD] [--name NAME]",
		Short: "Render a chat template with given variables, exactly as transformers would",
		Long: `template renders a chat template the way Hugging Face transformers'
apply_chat_template does (jinja2's sandbox with trim_blocks and lstrip_blocks,
tojson, raise_exception, strftime_now) and prints exactly the rendered text:
nothing is added, not even a newline. Use it to see what a model is really fed.

SOURCE is one of:
  a template file (chat_template.jinja or any .jinja),
  a tokenizer_config.json or chat_template.json (its "chat_template": a string,
      or a list of {"name", "template"}: --name picks one, default "default"),
  an .mlt tokenizer (its chat section; --name as above).
With a tokenizer_config.json or .mlt, its bos_token and eos_token strings are
passed too, unless VARS.json sets them.

VARS.json is one JSON object of the template variables, as apply_chat_template
passes them: messages, add_generation_prompt, tools, documents, bos_token,
eos_token and any extra ones (enable_thinking, ...). Key order and 1 vs 1.0 are
kept, as Python keeps them. "-" reads it from stdin.

--date fixes what strftime_now sees (that day at 00:00:00), so the output is
reproducible; without it, the current time.

A template that fails (a syntax error, raise_exception, an undefined value
used) exits with status 1 and the message, with the template's line and column.`,
		Example: `  krafla template chat_template.jinja --input vars.json
  krafla template ./Qwen3/tokenizer_config.json --input vars.json --date 2025-07-26
  krafla template model.mlt --name tool_use --input vars.json
  echo '{"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true}' |
    krafla template model.mlt --input -`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTemplate(cmd.Context(), args[0], o, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	c.Flags().StringVarP(&o.Input, "input", "i", "", "JSON object of the template variables (\"-\": stdin); required")
	c.Flags().StringVar(&o.Date, "date", "", "the date strftime_now sees, YYYY-MM-DD (default: now)")
	c.Flags().BoolVar(&o.Tools, "tools", false, "print the tool-call format detected in the template (one of "+strings.Join(chat.ToolFormats(), ", ")+", or none)")
	c.Flags().StringVar(&o.Parse, "parse", "", "raw model OUTPUT.txt: print the assistant message (content, reasoning_content, tool_calls) the server would return")
	c.Flags().StringVar(&o.Name, "name", "", "which named template of a tokenizer_config.json or .mlt (default: \"default\", else the first)")
	return c
}

func runTemplate(ctx context.Context, source string, o templateOptions, in io.Reader, out io.Writer) error {
	if o.Tools || o.Parse != "" {
		return runTemplateParse(source, o, in, out)
	}
	if o.Input == "" {
		return usageError{fmt.Errorf("template: --input VARS.json is required (\"-\" reads stdin)")}
	}
	var now time.Time
	if o.Date != "" {
		d, err := time.Parse("2006-01-02", o.Date)
		if err != nil {
			return usageError{fmt.Errorf("template: --date %q: want YYYY-MM-DD", o.Date)}
		}
		now = d
	}
	src, tokens, err := loadTemplateSource(source, o.Name)
	if err != nil {
		return err
	}
	text, err := renderTemplate(source, src, tokens, o.Input, in, jinja.Options{Now: now})
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, text)
	return err
}

// renderTemplate renders src (read from source) with the variables of the
// JSON file input, the special-token strings filling the variables it leaves
// unset.
func renderTemplate(source, src string, tokens map[string]string, input string, in io.Reader, opt jinja.Options) (string, error) {
	vars, err := readTemplateVars(input, in)
	if err != nil {
		return "", err
	}
	for k, v := range tokens {
		if _, set := vars[k]; !set && v != "" {
			vars[k] = v
		}
	}
	tpl, err := jinja.Parse(src)
	if err != nil {
		return "", fmt.Errorf("%s:%w", source, err)
	}
	text, err := tpl.Render(vars, opt)
	if err != nil {
		return "", fmt.Errorf("%s:%w", source, err)
	}
	return text, nil
}

// loadTemplateSource returns the template source SOURCE names and the
// special-token strings that travel with it (none for a bare template file).
func loadTemplateSource(source, name string) (string, map[string]string, error) {
	b, err := os.ReadFile(source)
	if err != nil {
		return "", nil, fmt.Errorf("template: %w", err)
	}
	var chat *mlt.Chat
	switch {
	case len(b) >= 4 && string(b[:4]) == "MLT1":
		tok, err := mlt.Parse(b)
		if err != nil {
			return "", nil, fmt.Errorf("template: %s: %w", source, err)
		}
		if tok.Chat == nil || len(tok.Chat.Templates) == 0 {
			return "", nil, fmt.Errorf("template: %s has no chat template (convert or tokenize a folder whose tokenizer_config.json has one)", source)
		}
		chat = tok.Chat
	case strings.EqualFold(filepath.Ext(source), ".json"):
		c, err := mlt.ReadHFChatConfig(source)
		if err != nil {
			return "", nil, fmt.Errorf("template: %w", err)
		}
		if len(c.Templates) == 0 {
			return "", nil, fmt.Errorf("template: %s has no \"chat_template\"", source)
		}
		chat = c
	default:
		if name != "" {
			return "", nil, usageError{fmt.Errorf("template: --name picks a template of a tokenizer_config.json or .mlt; %s is a template file", source)}
		}
		return string(b), nil, nil
	}
	src, ok := chat.Template(name)
	if !ok {
		names := make([]string, len(chat.Templates))
		for i, t := range chat.Templates {
			names[i] = fmt.Sprintf("%q", t.Name)
		}
		return "", nil, fmt.Errorf("template: %s has no template named %q (it has %s)", source, name, strings.Join(names, ", "))
	}
	return src, map[string]string{"bos_token": chat.BOSToken, "eos_token": chat.EOSToken}, nil
}

// readTemplateVars decodes VARS.json (one JSON object) keeping key order and
// int/float distinctions.
func readTemplateVars(path string, in io.Reader) (map[string]any, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(in)
		path = "stdin"
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("template: --input: %w", err)
	}
	v, err := jinja.DecodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("template: %s: %w", path, err)
	}
	d, ok := v.(*jinja.Dict)
	if !ok {
		return nil, fmt.Errorf("template: %s: want one JSON object of variables, got %s", path, jsonKind(v))
	}
	vars := make(map[string]any, d.Len())
	for _, k := range d.Keys() {
		vars[k.(string)], _ = d.Get(k)
	}
	return vars, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// runTemplateParse: --tools prints the detected tool-call format; --parse
// prints the message parsed from a raw output (with --input, the rendered
// prompt tells whether it opened <think>).
func runTemplateParse(source string, o templateOptions, in io.Reader, out io.Writer) error {
	src, tokens, err := loadTemplateSource(source, o.Name)
	if err != nil {
		return err
	}
	format := chat.ToolFormat(src)
	if o.Parse == "" {
		if format == "" {
			format = "none (output is plain content)"
		}
		_, err := fmt.Fprintf(out, "tool-call format: %s\n", format)
		return err
	}
	raw, err := os.ReadFile(o.Parse)
	if err != nil {
		return fmt.Errorf("template: %w", err)
	}
	thinkOpen := false
	if o.Input != "" {
		prompt, err := renderTemplate(source, src, tokens, o.Input, in, jinja.Options{})
		if err != nil {
			return err
		}
		thinkOpen = chat.ThinkOpen(prompt)
	}
	m, err := chat.ParseOutput(format, string(raw), thinkOpen)
	if err != nil {
		return fmt.Errorf("template: %s: %w", o.Parse, err)
	}
	msg := map[string]any{"role": "assistant", "content": m.Content}
	if m.Reasoning != "" {
		msg["reasoning_content"] = m.Reasoning
	}
	if len(m.ToolCalls) > 0 {
		var calls []any
		for _, c := range m.ToolCalls {
			calls = append(calls, map[string]any{"type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	b, err := json.MarshalIndent(msg, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}
