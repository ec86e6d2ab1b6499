package hub

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultEndpoint is the hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Env is the environment the hub client reads, as huggingface_hub's
// constants.py reads it; tests pass their own.
type Env func(string) string

// truthy is huggingface_hub's ENV_VARS_TRUE_VALUES.
func truthy(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// HFHome is $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
func HFHome(getenv Env) string {
	if h := getenv("HF_HOME"); h != "" {
		return expandHome(getenv, h)
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(expandHome(getenv, x), "huggingface")
	}
	return filepath.Join(home(getenv), ".cache", "huggingface")
}

// CacheDir is $HF_HUB_CACHE (or the older HUGGINGFACE_HUB_CACHE), else
// HFHome/hub.
func CacheDir(getenv Env) string {
	for _, k := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} {
		if v := getenv(k); v != "" {
			return expandHome(getenv, v)
		}
	}
	return filepath.Join(HFHome(getenv), "hub")
}

// Token is $HF_TOKEN, else the file $HF_TOKEN_PATH (default HFHome/token)
// that `huggingface-cli login` writes; "" when neither is set.
func Token(getenv Env) string {
	if t := strings.TrimSpace(getenv("HF_TOKEN")); t != "" {
		return t
	}
	p := getenv("HF_TOKEN_PATH")
	if p == "" {
		p = filepath.Join(HFHome(getenv), "token")
	}
	b, err := os.ReadFile(expandHome(getenv, p))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func home(getenv Env) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func expandHome(getenv Env, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(home(getenv), p[1:])
	}
	return p
}

// NewClient makes a client configured from the environment: HF_ENDPOINT,
// HF_TOKEN (then $HF_HOME/token), HF_HOME, HF_HUB_CACHE, HF_HUB_OFFLINE, and
// proxies from HTTPS_PROXY, HTTP_PROXY and NO_PROXY. getenv nil means os.Getenv.
func NewClient(getenv Env) *Client {
	if getenv == nil {
		getenv = os.Getenv
	}
	ep := strings.TrimRight(getenv("HF_ENDPOINT"), "/")
	if ep == "" {
		ep = DefaultEndpoint
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	return &Client{
		Endpoint: ep,
		Token:    Token(getenv),
		Cache:    CacheDir(getenv),
		Offline:  truthy(getenv("HF_HUB_OFFLINE")) || truthy(getenv("TRANSFORMERS_OFFLINE")),
		HTTP:     &http.Client{Transport: tr},
		Retries:  5,
		Backoff:  time.Second,
	}
}
