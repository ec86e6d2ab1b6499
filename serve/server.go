package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/grammar"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// Config configures a Server. Zero values take the defaults named.
type Config struct {
	Name         string        // the model id /v1/models lists and requests name (required)
	Ctx          int           // positions of each slot's cache; 0: min(max_seq, 4096)
	Parallel     int           // slots, each with its own cache; 0: 4
	Threads      int           // worker threads of the batched pass; 0: 1
	KV           infer.KVType  // each slot's cache element type; 0: infer.KVF32
	Queue        int           // requests waiting for a slot before 503; 0: 64
	BatchTokens  int           // tokens one step evaluates at most; 0: infer.DefaultBatch
	APIKey       string        // "": no key needed
	MaxBody      int64         // request body limit in bytes; 0: 8 MiB
	Timeout      time.Duration // generation deadline of a request; 0: 10 minutes
	BodyTimeout  time.Duration // time to read a request body; 0: 30 s
	WriteTimeout time.Duration // time to write one response or stream event; 0: 30 s
	Template     string        // the chat template's name in the tokenizer; "": the default
	TemplateFile string        // a chat template file (chat.Load) used instead of the tokenizer's
	Log          io.Writer     // one line per request and the server's events; nil: discard

	// Many models: with a Catalog the server serves every model it lists,
	// by the request's model, loading them on first use (Name, Template
	// and TemplateFile are then unused; Ctx is the most each model gets).
	Catalog   Catalog
	MaxLoaded int           // models loaded at once at most; 0: as many as fit in Memory
	Memory    int64         // bytes the loaded models' weights and every slot's cache may take; 0: DefaultMemory, else no limit
	KeepAlive time.Duration // how long a model stays loaded after its last request; 0: 5 minutes; negative: for good
	// CORS answers browsers as ollama does: the origins of this machine and
	// of desktop apps, and Origins (OLLAMA_ORIGINS, --origins; "*": any),
	// get Access-Control-Allow-Origin; other origins get 403. Off: no CORS
	// headers, every origin served (as before).
	CORS    bool
	Origins []string
}

func (c *Config) defaults() {
	if c.Parallel <= 0 {
		c.Parallel = 4
	}
	if c.Queue <= 0 {
		c.Queue = 64
	}
	if c.BatchTokens <= 0 {
		c.BatchTokens = infer.DefaultBatch
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 8 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = 30 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = 5 * time.Minute
	}
	if c.Memory <= 0 {
		c.Memory = DefaultMemory()
	}
	if c.Memory <= 0 {
		c.Memory = 1 << 62
	}
}

// Server answers the OpenAI API and ollama's for one model, or, with a
// Catalog, for every model the catalog lists (loaded on use: registry.go).
// Its Handler can be mounted before the one model is loaded: it answers 503
// until Start.
type Server struct {
	cfg     Config
	met     *metrics
	keyHash [32]byte
	created int64
	eng     atomic.Pointer[engine]
	reg     *registry // with a Catalog
	origins []string  // with CORS: the allowed origin patterns
	logMu   sync.Mutex
	stop    context.CancelFunc
	done    chan struct{}
	// beforeStep, when set before Start (tests), runs before every step.
	beforeStep func()
}

// engine is what a loaded model brings.
type engine struct {
	name    string // the model's name as clients send it
	m       *infer.Model
	tok     *mlt.Tokenizer
	sched   *scheduler
	chat    *chat.Template // nil: the model has no usable chat template
	chatErr error          // why chat is nil
	addBOS  bool
	stopIDs map[int]bool // end a completion
	chatIDs map[int]bool // end a chat answer
	fim     *mlt.FIM     // nil: the tokenizer has no fill-in-the-middle sentinels
	fimIDs  map[int]bool // end an infill: stopIDs and the FIM stops
	vocab   int
	ctx     int

	gOnce  sync.Once
	gVocab *grammar.Vocab // the tokenizer's bytes for grammar masks
	gErr   error

	stop context.CancelFunc // ends the scheduler
	done chan struct{}      // closed once it has ended

	emb embedState // embed.go
}

// grammarVocab returns the tokenizer's vocabulary for grammar masks, built
// on first use; chat stops end a constrained output.
func (e *engine) grammarVocab() (*grammar.Vocab, error) {
	e.gOnce.Do(func() {
		toks, ctl := e.tok.TokenBytes()
		// special tokens with their text: a call marker that is one
		// (gpt-oss's <|channel|>) is allowed where the call grammar reads it
		for id := range toks {
			if ctl[id] && e.tok.Tokens[id].Attr == mlt.AttrAdded {
				toks[id] = e.tok.Tokens[id].Bytes
			}
		}
		var stops []int
		for id := range e.chatIDs {
			if id < len(toks) {
				stops = append(stops, id)
			}
		}
		e.gVocab, e.gErr = grammar.NewVocab(toks, ctl, stops)
	})
	return e.gVocab, e.gErr
}

// NewServer returns a server that answers 503 until Start.
func NewServer(cfg Config) *Server {
	cfg.defaults()
	s := &Server{cfg: cfg, met: newMetrics(cfg.Parallel), created: time.Now().Unix()}
	if cfg.APIKey != "" {
		s.keyHash = sha256.Sum256([]byte(cfg.APIKey))
	}
	if cfg.Catalog != nil {
		s.reg = newRegistry(s, cfg.Catalog)
	}
	if cfg.CORS {
		s.origins = append(append([]string(nil), defaultOrigins...), cfg.Origins...)
	}
	return s
}

// Start makes the slots and the batch for m and tok and runs the scheduler
// until Close.
func (s *Server) Start(m *infer.Model, tok *mlt.Tokenizer) error {
	if s.cfg.Name == "" {
		return errors.New("serve: the model needs a name")
	}
	e, err := s.newEngine(s.cfg.Name, m, tok, &s.cfg)
	if err != nil {
		return err
	}
	sched := e.sched
	s.logf("%d slots of %d positions, %s cache: %.1f MiB", len(sched.slots), s.cfg.Ctx, sched.slots[0].sess.KV(),
		float64(int64(len(sched.slots))*sched.slots[0].sess.CacheBytes())/(1<<20))
	e.start(s.beforeStep)
	s.stop, s.done = e.stop, e.done
	s.eng.Store(e)
	return nil
}

// newEngine checks the tokenizer against m and makes the slots, the batch
// and the chat template of cfg (whose Ctx 0 it sets to the model's
// default); start runs its scheduler.
func (s *Server) newEngine(name string, m *infer.Model, tok *mlt.Tokenizer, cfg *Config) (*engine, error) {
	if err := infer.CheckTokenizer(m, tok); err != nil {
		return nil, err
	}
	c := m.Config()
	if cfg.Ctx == 0 {
		cfg.Ctx = min(c.MaxSeq, 4096)
	}
	sched, err := newScheduler(m, tok, cfg, s.met)
	if err != nil {
		return nil, err
	}
	e := &engine{name: name, m: m, tok: tok, sched: sched, addBOS: infer.AddBOS(tok), vocab: c.Vocab, ctx: cfg.Ctx,
		stopIDs: map[int]bool{}, chatIDs: map[int]bool{}}
	for _, id := range tok.StopTokens() {
		e.stopIDs[id] = true
		e.chatIDs[id] = true
	}
	if f, ok := tok.FIM(); ok {
		e.fim, e.fimIDs = &f, maps.Clone(e.stopIDs)
		for _, id := range f.Stops {
			e.fimIDs[id] = true
		}
	}
	if cfg.TemplateFile != "" {
		e.chat, e.chatErr = chat.Load(cfg.TemplateFile, tok)
	} else {
		e.chat, e.chatErr = chat.FromTokenizer(tok, cfg.Template)
	}
	if e.chatErr != nil && (cfg.Template != "" || cfg.TemplateFile != "") {
		// A template asked for must be there; a model without one, when
		// none was asked for, serves completions only.
		sched.close()
		return nil, e.chatErr
	}
	if e.chat != nil {
		for _, id := range e.chat.StopIDs() {
			e.chatIDs[id] = true
		}
	}
	return e, nil
}

// start runs the engine's scheduler until close.
func (e *engine) start(beforeStep func()) {
	e.sched.beforeStep = beforeStep
	ctx, cancel := context.WithCancel(context.Background())
	e.stop, e.done = cancel, make(chan struct{})
	go func() {
		defer close(e.done)
		e.sched.run(ctx)
		e.sched.close()
	}()
}

// close ends every running request (errShutdown), stops the scheduler and
// frees the slots; the model stays open.
func (e *engine) close() {
	if e.stop != nil {
		e.stop()
		<-e.done
	}
	e.closeEmbedder()
}

// Close ends every running request (errShutdown), stops the scheduler and
// frees the slots (with a catalog: those of every loaded model, closing them).
func (s *Server) Close() {
	if s.reg != nil {
		s.reg.close()
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	s.closeEmbedder()
}

// ChatError says why /v1/chat/completions is unavailable (nil when it works).
func (s *Server) ChatError() error {
	if e := s.eng.Load(); e != nil {
		return e.chatErr
	}
	return nil
}

func (s *Server) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, time.Now().UTC().Format("2006-01-02T15:04:05Z ")+format+"\n", args...)
}

// route is one path: its endpoint label, method and handler.
type route struct {
	endpoint int // index in endpoints
	method   string
	fn       func(w http.ResponseWriter, r *http.Request, e *engine)
}

func (s *Server) routes() map[string]route {
	return map[string]route{
		"/v1/chat/completions": {0, http.MethodPost, s.withModel(s.endpoint(s.decodeChat, true))},
		"/v1/completions":      {1, http.MethodPost, s.withModel(s.endpoint(s.decodeCompletion, false))},
		"/v1/models":           {2, http.MethodGet, s.models},
		"/tokenize":            {3, http.MethodPost, s.withModel(s.tokenize)},
		"/detokenize":          {4, http.MethodPost, s.withModel(s.detokenize)},
		// ollama's API (ollama.go)
		"/api/chat":     {5, http.MethodPost, s.withModel(s.ollamaChat)},
		"/api/generate": {6, http.MethodPost, s.withModel(s.ollamaGenerate)},
		"/api/show":     {7, http.MethodPost, s.withModel(s.ollamaShow)},
		"/api/tags":     {7, http.MethodGet, s.ollamaTags},
		"/api/ps":       {7, http.MethodGet, s.ollamaPS},
		"/api/version":  {7, http.MethodGet, s.ollamaVersion},
		"/api/pull":     {7, http.MethodPost, s.ollamaPull},
		"/api/delete":   {7, http.MethodDelete, s.ollamaDelete},
		"/api/copy":     {7, http.MethodPost, s.ollamaCopy},
		// embeddings (embed.go)
		"/v1/embeddings":  {8, http.MethodPost, s.withModel(s.embeddings)},
		"/api/embed":      {9, http.MethodPost, s.withModel(s.ollamaEmbed)},
		"/api/embeddings": {10, http.MethodPost, s.withModel(s.ollamaEmbeddings)},
	}
}

// Handler serves the API. Errors are OpenAI's error JSON, 404 and 405
// included (http.ServeMux's own are plain text).
func (s *Server) Handler() http.Handler {
	routes := s.routes()
	return http.HandlerFunc(func(w0 http.ResponseWriter, r *http.Request) {
		w := &statusWriter{ResponseWriter: w0}
		t0 := time.Now()
		rt, ok := routes[r.URL.Path]
		endpoint := len(endpoints) - 1
		if ok {
			endpoint = rt.endpoint
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logf("panic serving %s %s: %v", r.Method, r.URL.Path, v)
				if w.status == 0 {
					s.fail(w, r, errInternal(fmt.Errorf("internal error")))
				}
			}
			s.met.request(endpoint, w.status)
			s.logf("%s %s %d %s", r.Method, r.URL.Path, w.status, time.Since(t0).Round(time.Millisecond))
		}()
		s.serve(w, r, rt, ok)
	})
}

func (s *Server) serve(w *statusWriter, r *http.Request, rt route, known bool) {
	path := r.URL.Path
	if s.origins != nil && s.cors(w, r) {
		return
	}
	e := s.eng.Load()
	if path == "/health" || path == "/v1/health" {
		if e == nil && s.reg == nil {
			writeError(w, errUnavailable("the model is loading", 1))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	if path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// ollama's liveness check ("Ollama is running"), before the key.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			io.WriteString(w, "krafla is running")
		}
		return
	}
	if !s.authorized(r) {
		s.fail(w, r, errUnauthorized("a valid API key is required: send the header Authorization: Bearer KEY"))
		return
	}
	if path == "/metrics" {
		if r.Method != http.MethodGet {
			writeError(w, errMethod(r.Method, path))
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		s.met.write(w, time.Now())
		return
	}
	if strings.HasPrefix(path, "/v1/models/") {
		rt, known = route{2, http.MethodGet, s.model}, true
	}
	if !known {
		s.fail(w, r, errNotFound(fmt.Sprintf("no such path: %s", path), "not_found"))
		return
	}
	if r.Method != rt.method {
		w.Header().Set("Allow", rt.method)
		s.fail(w, r, errMethod(r.Method, path))
		return
	}
	if e == nil && s.reg == nil {
		s.fail(w, r, errUnavailable("the model is loading", 1))
		return
	}
	rt.fn(w, r, e)
}

// authorized compares the bearer token's SHA-256 with the key's in constant
// time (ConstantTimeCompare returns at once on unequal lengths; digests are
// always 32 bytes).
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(d[:], s.keyHash[:]) == 1
}

// readBody reads the body within the size limit and the body deadline.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	rc := http.NewResponseController(w)
	// A body deadline of its own, cleared once read: http.Server's
	// ReadTimeout would also cut the stream that follows (golang/go#18447).
	_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		// The deadline stays: the connection closes instead of waiting for
		// the rest of a body that never comes.
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge(s.cfg.MaxBody)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &apiError{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Message: "the request body was not received in time"}
		}
		return nil, badRequest("reading the body: %v", err)
	}
	_ = rc.SetReadDeadline(time.Time{})
	return b, nil
}

// readObject reads the body (readBody) and decodes it as a JSON object.
func (s *Server) readObject(w http.ResponseWriter, r *http.Request) (fields, *apiError) {
	body, ae := s.readBody(w, r)
	if ae != nil {
		return nil, ae
	}
	return decodeObject(body)
}

// statusWriter records the status sent, for the log and the metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's deadlines and Flush.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// newHTTPServer sets the connection limits around h.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler: h,
		// Slowloris: a client must finish its headers within this time.
		ReadHeaderTimeout: 10 * time.Second,
		// Keep-alive connections left idle are closed, so idle clients do not
		// hold file descriptors forever.
		IdleTimeout: 2 * time.Minute,
		// Headers are small; a larger block is an attack or a mistake.
		MaxHeaderBytes: 64 << 10,
		// ReadTimeout and WriteTimeout stay zero: they bound the whole
		// exchange and would cut long streams; readBody and the SSE writer set
		// per-read and per-event deadlines instead.
	}
}

// RunConfig is what Run needs beyond Config.
type RunConfig struct {
	Config
	Addr  string        // host:port to listen on
	Grace time.Duration // how long running requests may finish after ctx is done; 0: 30 s
	// Load opens the model and tokenizer; it runs after the listener is bound,
	// while /health answers 503. Nil with a Catalog: models load on use.
	Load func() (*infer.Model, *mlt.Tokenizer, error)
	// Ready, when set, is called with the listening address once the model
	// is loaded (the CLI prints "listening on http://ADDR").
	Ready func(addr net.Addr)
	start func(s *Server) // tests: called before the server starts
}

// Run listens, loads the model, serves until ctx is done (the CLI cancels it
// on SIGTERM or SIGINT), then stops accepting, lets running requests finish
// within the grace period, ends the rest and returns nil.
func Run(ctx context.Context, rc RunConfig) error {
	if rc.Grace <= 0 {
		rc.Grace = 30 * time.Second
	}
	ln, err := net.Listen("tcp", rc.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	s := NewServer(rc.Config)
	if rc.start != nil {
		rc.start(s)
	}
	hs := newHTTPServer(s.Handler())
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	if rc.Load != nil {
		m, tok, err := rc.Load()
		if err != nil {
			hs.Close()
			return err
		}
		defer m.Close()
		if err := s.Start(m, tok); err != nil {
			hs.Close()
			return err
		}
		if e := s.ChatError(); e != nil {
			s.logf("/v1/chat/completions is unavailable: %v", e)
		}
	} else if s.reg == nil {
		hs.Close()
		return errors.New("serve: Run needs Load (one model) or a Catalog")
	}
	if rc.Ready != nil {
		rc.Ready(ln.Addr())
	}
	select {
	case err := <-serveErr:
		s.Close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.logf("shutting down: no new requests; running ones have %s to finish", rc.Grace)
	grace, cancel := context.WithTimeout(context.Background(), rc.Grace)
	defer cancel()
	if err := hs.Shutdown(grace); err != nil {
		// The grace period is over: end what still runs (each stream gets an
		// error event), give the handlers a moment to send it, then close.
		s.Close()
		last, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(last) != nil {
			hs.Close()
		}
		return nil
	}
	s.Close()
	return nil
}
