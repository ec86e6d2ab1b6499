package serve

import (
	"net"
	"strconv"
	"strings"
)

// OllamaPort is ollama's default port.
const OllamaPort = 11434

// OllamaHost turns OLLAMA_HOST into the address to listen on, as ollama's
// envconfig.Host reads it: [SCHEME://]HOST[:PORT][/PATH], where the port
// defaults to 11434 without a scheme (80 with http://, 443 with https://),
// the host to 127.0.0.1 when only a port is given with no colon ("" with
// ":PORT", meaning every interface), and an invalid port to the default.
func OllamaHost(v string) string {
	v = strings.TrimSpace(v)
	defPort := strconv.Itoa(OllamaPort)
	scheme, hostport, ok := strings.Cut(v, "://")
	switch {
	case !ok:
		hostport = v
	case scheme == "http":
		defPort = "80"
	case scheme == "https":
		defPort = "443"
	}
	hostport, _, _ = strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if n, err := strconv.ParseInt(port, 10, 32); err != nil || n < 0 || n > 65535 {
		port = defPort
	}
	return net.JoinHostPort(host, port)
}

// SplitOrigins splits OLLAMA_ORIGINS (or --origins): origins separated by
// commas, spaces trimmed, empty ones dropped.
func SplitOrigins(v string) []string {
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}
