#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins v0.6.0): each
# mutant (a flipped comparison, a changed operator, ...) of the packages where a
# fault means a wrong result is run against the package's tests; a mutant the
# tests do not kill "lived". Not part of CI: it takes hours.
#
#   scripts/mutate.sh                 imatrix quantize gguf mlb asm infer mlt
#   scripts/mutate.sh quantize gguf   only those packages
#   MUTATE_EXCLUDE='regexp' scripts/mutate.sh infer
#                                     skip the files whose path matches (gremlins
#                                     --exclude-files), to cover a large package
#                                     in parts
#   GOFLAGS='-run=TestRope|TestForward' MUTATE_EXCLUDE=... scripts/mutate.sh infer
#                                     run only those tests against each mutant
#                                     (GOFLAGS reaches every go test gremlins
#                                     starts): a loaded machine covers a file in
#                                     a third of the time; a mutant that lives
#                                     must then be planted by hand and run
#                                     against the whole package before it is
#                                     called a survivor
#
# asm runs with -tags purego, so the mutants are in the pure-Go twins of the
# kernels. Results go to mutate-out/PACKAGE.json and .txt (MUTATE_OUT); the
# summary line of each package ("Test efficacy: ...") is printed at the end.
# Runs are niced (MUTATE_NICE, default 19) with MUTATE_WORKERS workers (default
# 1) and gremlins' --timeout-coefficient MUTATE_TIMEOUT (default 30: a mutant's
# time limit is that many times the coverage run's, and a timed-out mutant
# counts neither as killed nor as lived). Surviving mutants that are equivalent
# are listed in docs/RELIABILITY.md with the reason.
#
# Two traps of gremlins v0.6.0 that this script avoids:
# - --test-cpu N passes "-cpu N" to go test as one argument, which go test
#   rejects ("setup failed", exit 1), so every mutant reads as KILLED. Each test
#   run is held to one CPU with GOMAXPROCS=1 in the environment instead.
# - the time limit is derived from the coverage run; if go test served that run
#   from its cache, the limit is a fraction of a second and every mutant times
#   out. GOFLAGS=-count=1 keeps the cache out of it.
# And -vet=off: go test's vet took 18 of a mutant's 26 s in infer (the tree is
# vetted by scripts/test.sh); with that short coverage run a coefficient of 10
# timed out mutants that were only slow to build, hence 30.
set -euo pipefail
cd "$(dirname "$0")/.."

version=v0.6.0
gremlins=$(go env GOPATH)/bin/gremlins
if ! go version -m "$gremlins" 2>/dev/null | grep -q "go-gremlins/gremlins[[:space:]]*$version"; then
	go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version"
fi

pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(imatrix quantize gguf mlb asm infer mlt) # smallest first
out=${MUTATE_OUT:-mutate-out}
mkdir -p "$out"
# gremlins runs the tests in a temporary copy of the module, where ../shared is
# not beside the repository: point the tests at it (else they skip).
[ -n "${KRAFLA_SHARED:-}" ] || [ ! -d ../shared ] || export KRAFLA_SHARED="$(cd ../shared && pwd)"
for p in "${pkgs[@]}"; do
	p=${p#./}
	tags=()
	[ "$p" = asm ] && tags=(--tags purego)
	excl=()
	[ -z "${MUTATE_EXCLUDE:-}" ] || excl=(--exclude-files "$MUTATE_EXCLUDE")
	echo "== $p" >&2
	GOMAXPROCS=1 GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1 -vet=off" \
		nice -n "${MUTATE_NICE:-19}" "$gremlins" unleash "${tags[@]}" \
		--workers "${MUTATE_WORKERS:-1}" \
		--timeout-coefficient "${MUTATE_TIMEOUT:-30}" \
		"${excl[@]}" -o "$out/$p.json" "./$p" 2>&1 | tee "$out/$p.txt"
done
echo
for p in "${pkgs[@]}"; do
	p=${p#./}
	printf '%-10s %s\n' "$p" "$(grep -h 'Test efficacy\|Mutator coverage' "$out/$p.txt" | tr '\n' ' ')"
done
