#!/usr/bin/env bash
# Everything the tests need, then go vet and the tests (also with -tags purego,
# which compiles out every assembly kernel so the pure-Go twins run alone).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "test.sh: Go 1.26 is required (https://go.dev/dl)" >&2; exit 1; }
go mod download

# The llama.cpp comparisons (convert's TestLlamaCppLive, TestLlamaCppPreTokenizers)
# run against node-llama-cpp 3.21.1's prebuilt binaries from npm, installed once
# into a cache folder (about 80 MB, a minute); without node and npm, or with
# KRAFLA_NO_NPM=1, they skip saying so.
if [ -z "${KRAFLA_LLAMACPP:-}" ] && [ "${KRAFLA_NO_NPM:-}" != 1 ] && command -v node >/dev/null && command -v npm >/dev/null; then
	nlc=${XDG_CACHE_HOME:-$HOME/.cache}/krafla/node-llama-cpp-3.21.1
	if ! [ -d "$nlc/node_modules/node-llama-cpp" ]; then
		mkdir -p "$nlc"
		(cd "$nlc" && npm init -y >/dev/null && npm install --no-audit --no-fund --omit=optional --ignore-scripts \
			node-llama-cpp@3.21.1 "@node-llama-cpp/$(node -p 'process.platform + "-" + process.arch')@3.21.1" >/dev/null) ||
			echo "test.sh: npm install node-llama-cpp@3.21.1 failed: the llama.cpp comparisons will skip" >&2
	fi
	[ -d "$nlc/node_modules/node-llama-cpp" ] && export KRAFLA_LLAMACPP=$nlc
fi
go vet ./...
(cd asm/_gen && go vet ./...)  # the kernel generator, its own module
go test -count=1 -timeout 5m ./...
go test -count=1 -timeout 5m -tags purego ./...
