package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/serve"
)

func init() { addCommand(newServeCmd) }

type serveOptions struct {
	modelOptions
	Host         string
	Port         int
	Parallel     int
	Queue        int
	APIKey       string
	Name         string
	Template     string
	TemplateFile string
	Timeout      time.Duration
	Grace        time.Duration
	NoHuge       bool
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve MODEL.mlb",
		Short: "Serve the model over an OpenAI-compatible HTTP API",
		Long: `serve answers the OpenAI API for one model, so that OpenAI clients, editors,
Open WebUI or LangChain can use it:

  POST /v1/chat/completions   messages through the model's chat template
  POST /v1/completions        a prompt string or a list of token ids
  GET  /v1/models             the model, named by --name
  POST /tokenize, /detokenize llama-server's shapes
  POST /v1/embeddings         embeddings as krafla embed makes them (float or base64)
  POST /api/embed, /api/embeddings  ollama's embedding endpoints
  GET  /metrics               Prometheus text; GET /health: {"status":"ok"}

Point a client at the base URL http://HOST:PORT/v1 with the model id of
--name (default: the file name without .mlb). Without --api-key any key is
accepted (the OpenAI libraries need one: give any string); with it, clients
send it as "Authorization: Bearer KEY" (the libraries' apiKey / api_key).

--parallel slots each keep their own KV cache of --ctx positions. Every step
evaluates, in one batched pass, the next token of every generating slot and
chunks of the prompts still pending, so that the weights are read once for
all users; a request that extends a slot's previous conversation reuses the
cached prefix. Results do not depend on what runs alongside: with the same
seed a request gives the same tokens alone or among others. Requests beyond
the slots wait in a queue of --queue; beyond that they get 503 with
Retry-After.

It listens on loopback unless --host says otherwise, and prints
"listening on http://HOST:PORT" to stderr once the model is loaded (/health
answers 503 until then). SIGTERM or Ctrl-C stops accepting, lets running
requests finish within --grace, and exits 0.`,
		Example: `  krafla serve qwen.mlb
  krafla serve qwen.mlb --port 8000 --parallel 8 --ctx 8192 --name qwen

  # Python:  OpenAI(base_url="http://127.0.0.1:8080/v1", api_key="none")
  # Node:    new OpenAI({ baseURL: "http://127.0.0.1:8080/v1", apiKey: "none" })
  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"qwen","messages":[{"role":"user","content":"Hello"}],"stream":true}'

  # Reachable from other machines: set a key (or KRAFLA_API_KEY)
  krafla serve qwen.mlb --host 0.0.0.0 --api-key "$(cat key.txt)"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Port < 0 || o.Port > 65535 {
				return usageError{fmt.Errorf("--port %d: must be between 0 and 65535", o.Port)}
			}
			if o.Parallel < 1 || o.Parallel > 256 {
				return usageError{fmt.Errorf("--parallel %d: must be between 1 and 256", o.Parallel)}
			}
			if o.Queue < 1 {
				return usageError{fmt.Errorf("--queue %d: must be at least 1", o.Queue)}
			}
			if o.Timeout <= 0 || o.Grace <= 0 {
				return usageError{fmt.Errorf("--timeout and --grace must be positive")}
			}
			if o.APIKey == "" {
				o.APIKey = os.Getenv("KRAFLA_API_KEY")
			}
			if o.Name == "" {
				o.Name = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			p, err := modelPath(ctx, args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runServe(ctx, p, o, cmd.ErrOrStderr())
		},
	}
	o.bind(c)
	o.bindKV(c)
	f := c.Flags()
	f.StringVar(&o.Host, "host", "127.0.0.1", "address to listen on (0.0.0.0: every interface; then set --api-key)")
	f.IntVar(&o.Port, "port", 8080, "TCP port")
	f.IntVar(&o.Parallel, "parallel", 4, "slots: requests generated at once, each with a KV cache of --ctx positions")
	f.IntVar(&o.Queue, "queue", 64, "requests that may wait for a slot before the server answers 503")
	f.StringVar(&o.APIKey, "api-key", "", "require this key (Authorization: Bearer KEY); default $KRAFLA_API_KEY, none when unset")
	f.StringVar(&o.Name, "name", "", "the model id clients name (default: MODEL's file name without the extension)")
	f.StringVar(&o.TemplateFile, "template", "", "chat template FILE: a .jinja file, or a tokenizer_config.json / chat_template.json (default: the tokenizer's)")
	f.StringVar(&o.Template, "template-name", "", "which of the tokenizer's named templates (e.g. tool_use; default: the default one)")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "generation deadline of a request (it then ends with finish_reason length)")
	f.DurationVar(&o.Grace, "grace", 30*time.Second, "on SIGTERM, how long running requests may take to finish")
	f.BoolVar(&o.NoHuge, "no-huge-pages", false, "repack the weights into ordinary memory instead of huge pages")
	return c
}

func runServe(ctx context.Context, path string, o serveOptions, errOut io.Writer) error {
	if o.Ctx < 0 || o.Threads < 1 {
		return usageError{fmt.Errorf("--ctx must be positive and --threads at least 1")}
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	if ip := net.ParseIP(o.Host); o.APIKey == "" && (ip == nil || !ip.IsLoopback()) && o.Host != "localhost" {
		fmt.Fprintf(errOut, "warning: listening on %s without --api-key: anyone who reaches it can use the model\n", o.Host)
	}
	return serve.Run(ctx, serve.RunConfig{
		Config: serve.Config{Name: o.Name, Ctx: o.Ctx, Parallel: o.Parallel, Threads: o.Threads, KV: o.KV, Queue: o.Queue,
			APIKey: o.APIKey, Timeout: o.Timeout, Template: o.Template, TemplateFile: o.TemplateFile, Log: errOut},
		Addr:  addr,
		Grace: o.Grace,
		Load: func() (*infer.Model, *mlt.Tokenizer, error) {
			m, tok, err := loadModel(path, o.modelOptions)
			if err == nil && !o.NoHuge {
				hugePages(m, false, errOut)
			}
			return m, tok, err
		},
		Ready: func(a net.Addr) { fmt.Fprintf(errOut, "listening on http://%s\n", a) },
	})
}
