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

go vet ./...
(cd asm/_gen && go vet ./...)  # the kernel generator, its own module
go test -count=1 -timeout 5m ./...
go test -count=1 -timeout 5m -tags purego ./...
