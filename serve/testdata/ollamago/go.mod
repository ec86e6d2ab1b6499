// The official ollama Go client (github.com/ollama/ollama/api, what the
// ollama CLI uses) against krafla serve: TestOllamaGo builds this program
// from the module cache, which scripts/test.sh fills when the module proxy
// is reachable. A module of its own, so krafla's go.mod stays free of
// ollama's.
module krafla-ollamago

go 1.24.1

require github.com/ollama/ollama v0.17.4

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/wk8/go-ordered-map/v2 v2.1.8 // indirect
	golang.org/x/crypto v0.43.0 // indirect
	golang.org/x/sys v0.37.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
