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
	// Many models (no MODEL argument)
	Models    string
	MaxLoaded int
	MemoryMiB int64
	KeepAlive time.Duration
	Ollama    bool
	Origins   string
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve [MODEL]",
		Short: "Serve models over the OpenAI and ollama HTTP APIs",
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
requests finish within --grace, and exits 0.

Without MODEL it serves every model of the store (krafla list; or every
.mlb of --models DIR), as ollama does: a request's model names one as
krafla list shows it (ORG/NAME:TYPE; ORG/NAME or ORG/NAME:latest picks its
q8_0, else the first), GET /v1/models and /api/tags list them. A model loads
on its first request (others for it wait) and stays loaded --keep-alive
after its last one (a request's keep_alive overrides: 0 unloads at once,
negative keeps it); at most --max-loaded at once, within --memory MiB
counting weights and every slot's KV cache, the least recently used idle
model unloaded first. One that cannot fit is refused with 503 saying why.

ollama's API is served on the same port, in both modes: POST /api/chat,
/api/generate, /api/show, /api/pull (from the Hugging Face hub into the
store), /api/copy, DELETE /api/delete, GET /api/tags, /api/ps, /api/version,
and GET / ("krafla is running"). With --ollama, or with OLLAMA_HOST set
(read as ollama reads it), the default address is ollama's 127.0.0.1:11434,
and browsers get CORS as from ollama: pages on this machine and desktop
apps, plus OLLAMA_ORIGINS / --origins ("*": any); other origins get 403.
Stop ollama first, then point any ollama client at it unchanged.`,
		Example: `  krafla serve qwen.mlb
  krafla serve qwen.mlb --port 8000 --parallel 8 --ctx 8192 --name qwen

  # Python:  OpenAI(base_url="http://127.0.0.1:8080/v1", api_key="none")
  # Node:    new OpenAI({ baseURL: "http://127.0.0.1:8080/v1", apiKey: "none" })
  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \
    -d '{"model":"qwen","messages":[{"role":"user","content":"Hello"}],"stream":true}'

  # Reachable from other machines: set a key (or KRAFLA_API_KEY)
  krafla serve qwen.mlb --host 0.0.0.0 --api-key "$(cat key.txt)"

  # Every model of the store, as a drop-in for ollama (port 11434)
  krafla serve --ollama
  OLLAMA_HOST=0.0.0.0:11434 krafla serve --max-loaded 2 --keep-alive 10m`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return exactArgs(1)(c, args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
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
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			addr, cors, err := serveAddr(cmd, &o)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return runServeMany(ctx, o, addr, cors, cmd.ErrOrStderr())
			}
			if o.Models != "" {
				return usageError{fmt.Errorf("--models DIR serves a folder of models: give it without MODEL")}
			}
			for _, f := range []string{"max-loaded", "memory", "keep-alive"} {
				if cmd.Flags().Changed(f) {
					return usageError{fmt.Errorf("--%s applies to serving many models: give it without MODEL", f)}
				}
			}
			if o.Name == "" {
				o.Name = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			p, err := modelPath(ctx, args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runServe(ctx, p, o, addr, cors, cmd.ErrOrStderr())
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
	f.StringVar(&o.Models, "models", "", "without MODEL: serve every .mlb of this folder instead of the model store")
	f.IntVar(&o.MaxLoaded, "max-loaded", 0, "without MODEL: models loaded at once at most (0: as many as fit in --memory)")
	f.Int64Var(&o.MemoryMiB, "memory", 0, "without MODEL: MiB the loaded models' weights and KV caches may take (0: 75% of RAM)")
	f.DurationVar(&o.KeepAlive, "keep-alive", 5*time.Minute, "without MODEL: how long a model stays loaded after its last request (negative: for good)")
	f.BoolVar(&o.Ollama, "ollama", false, "listen on ollama's port 11434 (unless --port) and answer browsers with ollama's CORS rules")
	f.StringVar(&o.Origins, "origins", "", "with CORS: more allowed browser origins, comma-separated (as OLLAMA_ORIGINS; \"*\": any)")
	return c
}

// serveAddr is the address to listen on: --host and --port when given;
// else OLLAMA_HOST, read as ollama reads it; else 127.0.0.1 with port 11434
// for --ollama, 8080 otherwise. CORS is on with --ollama, OLLAMA_HOST,
// OLLAMA_ORIGINS or --origins.
func serveAddr(cmd *cobra.Command, o *serveOptions) (string, bool, error) {
	f := cmd.Flags()
	env := os.Getenv("OLLAMA_HOST")
	cors := o.Ollama || env != "" || o.Origins != "" || os.Getenv("OLLAMA_ORIGINS") != ""
	if !f.Changed("host") && !f.Changed("port") && env != "" {
		addr := serve.OllamaHost(env)
		h, _, _ := net.SplitHostPort(addr)
		o.Host = h
		return addr, cors, nil
	}
	if o.Ollama && !f.Changed("port") {
		o.Port = serve.OllamaPort
	}
	if o.Port < 0 || o.Port > 65535 {
		return "", false, usageError{fmt.Errorf("--port %d: must be between 0 and 65535", o.Port)}
	}
	return net.JoinHostPort(o.Host, strconv.Itoa(o.Port)), cors, nil
}

// serveConfig is the server configuration the flags give.
func serveConfig(o serveOptions, cors bool, errOut io.Writer) serve.Config {
	return serve.Config{Name: o.Name, Ctx: o.Ctx, Parallel: o.Parallel, Threads: o.Threads, KV: o.KV, Queue: o.Queue,
		APIKey: o.APIKey, Timeout: o.Timeout, Template: o.Template, TemplateFile: o.TemplateFile, Log: errOut,
		CORS: cors, Origins: append(serve.SplitOrigins(os.Getenv("OLLAMA_ORIGINS")), serve.SplitOrigins(o.Origins)...)}
}

func warnOpen(host, key string, errOut io.Writer) {
	if ip := net.ParseIP(host); key == "" && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		what := host
		if what == "" {
			what = "every interface"
		}
		fmt.Fprintf(errOut, "warning: listening on %s without --api-key: anyone who reaches it can use the models\n", what)
	}
}

// runServeMany serves every model of the store (or of --models DIR).
func runServeMany(ctx context.Context, o serveOptions, addr string, cors bool, errOut io.Writer) error {
	if o.Ctx < 0 || o.Threads < 1 {
		return usageError{fmt.Errorf("--ctx must be positive and --threads at least 1")}
	}
	if o.Template != "" || o.TemplateFile != "" || o.Name != "" {
		return usageError{fmt.Errorf("--template, --template-name and --name apply to one model: give MODEL")}
	}
	if o.MaxLoaded < 0 || o.MemoryMiB < 0 {
		return usageError{fmt.Errorf("--max-loaded and --memory must not be negative")}
	}
	warnOpen(o.Host, o.APIKey, errOut)
	load := func(path string) (*infer.Model, *mlt.Tokenizer, error) {
		m, tok, err := loadModel(path, o.modelOptions)
		if err == nil && !o.NoHuge {
			hugePages(m, false, errOut)
		}
		return m, tok, err
	}
	var cat serve.Catalog
	where := ""
	if o.Models != "" {
		if st, err := os.Stat(o.Models); err != nil || !st.IsDir() {
			return usageError{fmt.Errorf("--models %s: not a folder", o.Models)}
		}
		cat, where = &serve.DirCatalog{Dir: o.Models, Load: load}, o.Models
	} else {
		st := newStore(errOut)
		cat, where = &serve.StoreCatalog{Store: st, Load: load}, st.Dir
	}
	cfg := serveConfig(o, cors, errOut)
	cfg.Catalog, cfg.MaxLoaded, cfg.Memory, cfg.KeepAlive = cat, o.MaxLoaded, o.MemoryMiB<<20, o.KeepAlive
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = time.Nanosecond // 0 means the default in serve.Config: unload as soon as idle
	}
	return serve.Run(ctx, serve.RunConfig{
		Config: cfg,
		Addr:   addr,
		Grace:  o.Grace,
		Ready: func(a net.Addr) {
			n := 0
			if ms, err := cat.Models(); err == nil {
				n = len(ms)
			}
			what := "models"
			if n == 1 {
				what = "model"
			}
			fmt.Fprintf(errOut, "serving %d %s of %s (loaded on first use)\nlistening on http://%s\n", n, what, where, a)
		},
	})
}

func runServe(ctx context.Context, path string, o serveOptions, addr string, cors bool, errOut io.Writer) error {
	if o.Ctx < 0 || o.Threads < 1 {
		return usageError{fmt.Errorf("--ctx must be positive and --threads at least 1")}
	}
	warnOpen(o.Host, o.APIKey, errOut)
	return serve.Run(ctx, serve.RunConfig{
		Config: serveConfig(o, cors, errOut),
		Addr:   addr,
		Grace:  o.Grace,
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
