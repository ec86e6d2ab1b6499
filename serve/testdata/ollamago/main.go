// Command ollamago drives krafla serve with the official ollama Go client
// (github.com/ollama/ollama/api) as the ollama CLI does:
//
//	ollamago URL
//
// It prints one line: "RESULT " and JSON of what each call gave
// (TestOllamaGo in krafla's serve package reads it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"time"

	"github.com/ollama/ollama/api"
)

// answer, failure and the keys of out are those of ../ollamajs/e2e.mjs,
// so that one test reads both.
type answer struct {
	Content, Response, Role, Reason string
	Done                            bool
	Eval, Prompt, Parts             int
}

type failure struct {
	Status      int
	Name, Error string
}

func failed(err error) failure {
	var se api.StatusError
	switch {
	case err == nil:
		return failure{}
	case errors.As(err, &se):
		return failure{Status: se.StatusCode, Name: "StatusError", Error: se.ErrorMessage}
	}
	return failure{Status: -1, Name: "error", Error: err.Error()}
}

type model struct {
	Name  string
	Size  int64
	Quant string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ollamago URL")
		os.Exit(2)
	}
	base, err := url.Parse(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := api.NewClient(base, http.DefaultClient)
	out := map[string]any{}
	must := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
			os.Exit(1)
		}
	}
	no := false
	opts := map[string]any{"temperature": 0, "num_predict": 8, "repeat_penalty": 1}

	must("heartbeat", c.Heartbeat(ctx))
	v, err := c.Version(ctx)
	must("version", err)
	out["version"] = v

	// pull, streamed: the statuses and the last progress of the weights
	var statuses []string
	var weights map[string]int64
	must("pull", c.Pull(ctx, &api.PullRequest{Model: "org/tiny"}, func(p api.ProgressResponse) error {
		statuses = append(statuses, p.Status)
		if p.Digest == "model.safetensors" {
			weights = map[string]int64{"total": p.Total, "completed": p.Completed}
		}
		return nil
	}))
	out["pull"] = map[string]any{"first": statuses[0], "last": statuses[len(statuses)-1], "weights": weights}
	var pull2 string
	must("pull stories", c.Pull(ctx, &api.PullRequest{Model: "karpathy/stories260K", Stream: &no}, func(p api.ProgressResponse) error {
		pull2 = p.Status
		return nil
	}))
	out["pull2"] = map[string]string{"status": pull2}

	names := func() []string {
		l, err := c.List(ctx)
		must("list", err)
		var n []string
		for _, m := range l.Models {
			n = append(n, m.Name)
		}
		sort.Strings(n)
		return n
	}
	list, err := c.List(ctx)
	must("list", err)
	var models []model
	for _, m := range list.Models {
		models = append(models, model{m.Name, m.Size, m.Details.QuantizationLevel})
	}
	out["list"] = models
	show, err := c.Show(ctx, &api.ShowRequest{Model: "org/tiny"})
	must("show", err)
	out["show"] = map[string]any{"template": show.Template, "capabilities": show.Capabilities, "layers": show.ModelInfo["krafla.block_count"]}

	msgs := []api.Message{{Role: "user", Content: "Hello"}}
	var chat answer
	must("chat", c.Chat(ctx, &api.ChatRequest{Model: "org/tiny", Messages: msgs, Options: opts, Stream: &no}, func(r api.ChatResponse) error {
		chat = answer{Content: r.Message.Content, Role: r.Message.Role, Done: r.Done, Reason: r.DoneReason, Eval: r.EvalCount}
		return nil
	}))
	out["chat"] = chat
	var stream answer
	must("chat stream", c.Chat(ctx, &api.ChatRequest{Model: "org/tiny:latest", Messages: msgs, Options: opts}, func(r api.ChatResponse) error {
		stream.Content += r.Message.Content
		stream.Role, stream.Done, stream.Reason, stream.Eval = r.Message.Role, r.Done, r.DoneReason, r.EvalCount
		stream.Parts++
		return nil
	}))
	out["stream"] = stream
	gen := func(req *api.GenerateRequest) (answer, error) {
		var a answer
		err := c.Generate(ctx, req, func(r api.GenerateResponse) error {
			a.Response += r.Response
			a.Done, a.Reason, a.Eval, a.Prompt = r.Done, r.DoneReason, r.EvalCount, r.PromptEvalCount
			return nil
		})
		return a, err
	}
	g, err := gen(&api.GenerateRequest{Model: "karpathy/stories260K", Prompt: "Once upon a time", Raw: true, Options: opts})
	must("generate", err)
	out["generate"] = g
	// fill-in-the-middle: org/tiny's tokenizer has Qwen2.5-Coder's sentinels
	fo := map[string]any{"temperature": 0, "num_predict": 8, "repeat_penalty": 100, "repeat_last_n": -1}
	f, err := gen(&api.GenerateRequest{Model: "org/tiny", Prompt: "ab", Suffix: "cd", Options: fo, Stream: &no})
	must("generate with suffix", err)
	out["fim"] = f

	ps, err := c.ListRunning(ctx)
	must("ps", err)
	var running []string
	for _, m := range ps.Models {
		running = append(running, m.Name)
	}
	sort.Strings(running)
	out["ps"] = running
	must("copy", c.Copy(ctx, &api.CopyRequest{Source: "org/tiny", Destination: "me/tiny"}))
	out["afterCopy"] = names()
	must("delete", c.Delete(ctx, &api.DeleteRequest{Model: "me/tiny"}))
	out["afterDelete"] = names()

	out["notFound"] = failed(c.Chat(ctx, &api.ChatRequest{Model: "nope/nope", Messages: msgs}, func(api.ChatResponse) error { return nil }))
	_, err = gen(&api.GenerateRequest{Model: "org/tiny", Prompt: "x", Options: map[string]any{"temperature": "hot"}})
	out["badOption"] = failed(err)
	_, err = gen(&api.GenerateRequest{Model: "karpathy/stories260K", Prompt: "x", Suffix: "y"})
	out["noFIM"] = failed(err)
	out["badPull"] = failed(c.Pull(ctx, &api.PullRequest{Model: "org/missing"}, func(api.ProgressResponse) error { return nil }))

	b, err := json.Marshal(out)
	must("result", err)
	fmt.Println("RESULT " + string(b))
}
