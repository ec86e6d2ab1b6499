#!/usr/bin/env bash
# Everything the tests need, then go vet and the tests (also with -tags purego,
# which compiles out every assembly kernel so the pure-Go twins run alone).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "test.sh: Go 1.26 is required (https://go.dev/dl)" >&2; exit 1; }
go mod download
# hub's interop test runs @huggingface/hub (npm; git-ignored node_modules); it skips without npm.
if command -v npm >/dev/null; then
  (cd hub/testdata/hfjs && npm install --no-audit --no-fund --silent) || echo "test.sh: npm install failed; hub's TestHFJS will skip" >&2
fi
# grammar: ajv (npm) validates constrained outputs in TestAjv; skipped without npm.
if command -v npm >/dev/null; then
  (cd grammar/testdata/ajv && npm install --no-audit --no-fund --silent >/dev/null) ||
    echo "test.sh: npm install of ajv failed; grammar's TestAjv will skip" >&2
fi
# serve: the official ollama client (npm ollama 0.6.3) drives TestOllamaJS; skipped without npm.
if command -v npm >/dev/null; then
  (cd serve/testdata/ollamajs && npm install --no-audit --no-fund --silent >/dev/null) ||
    echo "test.sh: npm install of ollama failed; serve's TestOllamaJS will skip" >&2
fi
# serve: the official ollama Go client (github.com/ollama/ollama/api, what the ollama CLI
# uses) drives TestOllamaGo from serve/testdata/ollamago, a module of its own built from the
# module cache; its modules (about 25 MB) come from the module proxy when it is reachable,
# else the test skips.
if (cd serve/testdata/ollamago && GOWORK=off go mod download); then
  (cd serve/testdata/ollamago && GOWORK=off go vet .)
else
  echo "test.sh: go mod download in serve/testdata/ollamago failed; serve's TestOllamaGo will skip" >&2
fi

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
# The embeddings test of the official openai client (cmd/krafla's
# TestOpenAIClientEmbeddings: embeddings.create() against krafla serve) runs
# openai@7.59.0 from npm, installed once into the cache folder; without node
# and npm, or with KRAFLA_NO_NPM=1, it skips saying so.
if [ -z "${KRAFLA_OPENAI:-}" ] && [ "${KRAFLA_NO_NPM:-}" != 1 ] && command -v node >/dev/null && command -v npm >/dev/null; then
	oai=${XDG_CACHE_HOME:-$HOME/.cache}/krafla/openai-7.59.0
	if ! [ -f "$oai/node_modules/openai/package.json" ]; then
		mkdir -p "$oai"
		(cd "$oai" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts openai@7.59.0 >/dev/null) ||
			echo "test.sh: npm install openai@7.59.0 failed: TestOpenAIClientEmbeddings and TestOpenAIClient will skip" >&2
	fi
	[ -f "$oai/node_modules/openai/package.json" ] && export KRAFLA_OPENAI=$oai
fi
go vet ./...
(cd asm/_gen && go vet ./...)  # the kernel generator, its own module
# The timeout guards against a hang, not against a slow machine: a loaded
# 2-vCPU runner takes convert to five minutes alone and past fifteen beside other work.
go test -count=1 -timeout 30m ./...
go test -count=1 -timeout 30m -tags purego ./...

# Every release target (scripts/release.sh) compiles and vets, tests included,
# so that no platform breaks silently (issue 23); linux/riscv64 stands for the
# platforms without kernels (pure Go), wasip1/wasm for those without mmap.
for t in windows/amd64 darwin/arm64 darwin/amd64 linux/arm64 linux/riscv64 wasip1/wasm; do
  CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go vet ./...
done

# arm64 kernels under qemu-user (issue 23): -cpu max has dotprod and i8mm,
# cortex-a53 (ARMv8.0) has neither, so the plain-NEON variant runs too. The
# asm tests and the infer bit-identity test of every variant against pure Go.
if ! command -v qemu-aarch64-static >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq qemu-user-static) >/dev/null || true
fi
if command -v qemu-aarch64-static >/dev/null; then
  GOARCH=arm64 go vet -tags purego ./asm/  # linux/arm64 without tags: the release loop above
  QEMU_CPU=max GOARCH=arm64 go test -short -count=1 -timeout 10m -exec qemu-aarch64-static ./asm/
  QEMU_CPU=max GOARCH=arm64 go test -count=1 -timeout 10m -exec qemu-aarch64-static ./infer/ -run 'KernelVariants|FloatKernels|LogitsHash|MixedPacks'
  QEMU_CPU=cortex-a53 GOARCH=arm64 go test -short -count=1 -timeout 10m -exec qemu-aarch64-static ./asm/ -run 'Select|Use|Tiles|FuzzProducts|Quantize|F16Sweep|FloatKernels|Isum|GGMLKernels|DotsGGML|Sums32|PackQ4_K|PackQ6_K|PackIQ4_XS|PackQ5_K'
else
  echo "test.sh: qemu-aarch64-static not available (no apt-get or not root): arm64 kernel tests SKIPPED" >&2
fi
