#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins v0.6.0): each
# mutant (a flipped comparison, a changed operator, ...) of the packages where a
# fault means a wrong result is run against the package's tests; a mutant the
# tests do not kill "lived". Not part of CI: it takes hours.
#
#   scripts/mutate.sh                 quantize mlb gguf infer mlt imatrix asm
#   scripts/mutate.sh quantize gguf   only those packages
#
# asm runs with -tags purego, so the mutants are in the pure-Go twins of the
# kernels. Results go to mutate-out/PACKAGE.json and .txt (MUTATE_OUT); the
# summary line of each package ("Test efficacy: ...") is printed at the end.
# Runs are niced (MUTATE_NICE, default 19) with MUTATE_WORKERS workers (default
# 1) and gremlins' --timeout-coefficient MUTATE_TIMEOUT (default 3). Surviving
# mutants that are equivalent are listed in docs/RELIABILITY.md with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v0.6.0
gremlins=$(go env GOPATH)/bin/gremlins
if ! go version -m "$gremlins" 2>/dev/null | grep -q "go-gremlins/gremlins[[:space:]]*$version"; then
	go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
fi

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(quantize mlb gguf infer mlt imatrix asm)
out=${MUTATE_OUT:-mutate-out}
mkdir -p "$out"
for p in "${pkgs[@]}"; do
	p=${p#./}
	tags=()
	[ "$p" = asm ] && tags=(--tags purego)
	echo "== $p" >&2
	nice -n "${MUTATE_NICE:-19}" "$gremlins" unleash "${tags[@]}" \
		--workers "${MUTATE_WORKERS:-1}" --test-cpu 1 \
		--timeout-coefficient "${MUTATE_TIMEOUT:-3}" \
		-o "$out/$p.json" "./$p" 2>&1 | tee "$out/$p.txt"
done
echo
for p in "${pkgs[@]}"; do
	p=${p#./}
	printf '%-10s %s\n' "$p" "$(grep -h 'Test efficacy\|Mutator coverage' "$out/$p.txt" | tr '\n' ' ')"
done
