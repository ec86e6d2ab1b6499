#!/usr/bin/env bash
# Runs Krafla's fuzz targets, one at a time, for anyone to continue a campaign.
#
#   scripts/fuzz.sh                 every target, 20m each, one after another
#   scripts/fuzz.sh -l              list the targets (PACKAGE TARGET)
#   scripts/fuzz.sh FuzzConfig 5m   one target by name (every package that has it)
#   scripts/fuzz.sh ./mlb 1h        every target of one package
#   scripts/fuzz.sh ./mlt:FuzzParse 30s
#   scripts/fuzz.sh -k 1024 ./imatrix   copy the cached inputs of at most 1024 bytes
#                                      into testdata/fuzz (no fuzzing)
#
# Targets are discovered with `go test -list 'Fuzz.*'` in every package whose
# tests define one, so new targets are picked up without editing this file.
# DURATION is anything -fuzztime takes (20m, 90s, 1h, or 100000x executions).
#
# Each run starts from the package's testdata/fuzz/TARGET seeds and from the Go
# fuzz cache ($(go env GOCACHE)/fuzz/IMPORTPATH/TARGET), where the fuzzer keeps
# every input that found new coverage. A failure leaves the input in
# testdata/fuzz/TARGET: fix the bug and keep the file, it becomes a seed that
# `go test` runs from then on.
#
# With FUZZ_KEEP=BYTES (or -k BYTES, which only copies), the cached inputs of at
# most BYTES bytes that testdata/fuzz/TARGET lacks are copied there after the run;
# review and commit them so that every later run and `go test` starts from them.
#
# The machine is usually shared: runs are niced (FUZZ_NICE, default 19) and use
# FUZZ_PARALLEL workers (default 1); each input that finds new coverage is
# minimized for at most FUZZ_MINIMIZE (default 10s, Go's is 60s), during which
# the exec counter stands still. The last line of each run ("execs: N, new
# interesting: M (total: T)") is printed in the summary at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# targets prints "PACKAGE TARGET" for every fuzz target of the module, or of
# package $1 only.
targets() {
	local dirs
	dirs=$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
	for d in $dirs; do
		[ -z "${1:-}" ] || [ "$d" = "./${1#./}" ] || continue
		go test -list 'Fuzz.*' "$d" | grep '^Fuzz' | sed "s|^|$d |"
	done
}

# keep PKG TARGET copies the fuzz cache's inputs of at most $keep bytes into
# PKG/testdata/fuzz/TARGET (the cache names each file by its content's hash).
keep() {
	local cache dst n=0 bytes=0 f size
	cache="$(go env GOCACHE)/fuzz/$(go list "$1")/$2"
	dst="$1/testdata/fuzz/$2"
	[ -d "$cache" ] || { echo "$1 $2: no cached inputs in $cache"; return; }
	mkdir -p "$dst"
	for f in "$cache"/*; do
		size=$(wc -c <"$f")
		if [ "$size" -le "$keep" ] && [ ! -e "$dst/$(basename "$f")" ]; then
			cp "$f" "$dst/"
			n=$((n + 1))
			bytes=$((bytes + size))
		fi
	done
	echo "$1 $2: copied $n inputs ($bytes bytes) of at most $keep bytes into $dst"
}

list=0
keep=${FUZZ_KEEP:-0}
only_keep=0
case "${1:-}" in
-h | --help) usage ;;
-l | --list) list=1 ;;
-k)
	keep=${2:?-k needs a size in bytes}
	only_keep=1
	shift 2
	;;
esac
if [ "$list" = 1 ]; then
	targets
	exit 0
fi
want=${1:-}
dur=${2:-20m}

# A package named in TARGET spares compiling the others' tests.
pkgonly=""
case "$want" in
*/*) pkgonly=${want%%:*} ;;
esac
all=$(targets "$pkgonly")
sel=""
while read -r pkg name; do
	[ -n "$pkg" ] || continue
	case "$want" in
	"" | "$name" | "$pkg" | "${pkg#./}" | "$pkg:$name" | "${pkg#./}:$name") sel+="$pkg $name"$'\n' ;;
	esac
done <<<"$all"
if [ -z "$sel" ]; then
	echo "fuzz.sh: no fuzz target matches ${want:-anything}; the targets are:" >&2
	echo "$all" >&2
	exit 2
fi

if [ "$only_keep" = 1 ]; then
	while read -r pkg name; do
		[ -z "$pkg" ] || keep "$pkg" "$name"
	done <<<"$sel"
	exit 0
fi

summary=""
status=0
while read -r pkg name; do
	[ -n "$pkg" ] || continue
	echo "== $pkg $name for $dur"
	log=$(mktemp)
	rc=0
	nice -n "${FUZZ_NICE:-19}" go test -run '^$' -fuzz "^${name}\$" -fuzztime "$dur" \
		-fuzzminimizetime "${FUZZ_MINIMIZE:-10s}" -parallel "${FUZZ_PARALLEL:-1}" "$pkg" 2>&1 | tee "$log" || rc=$?
	last=$(grep -E '^fuzz: elapsed' "$log" | tail -n1 || true)
	if [ "$rc" != 0 ]; then
		status=1
		last="FAILED (the input is under $pkg/testdata/fuzz/$name) $last"
	fi
	summary+="$pkg $name: ${last:-no fuzzing output}"$'\n'
	rm -f "$log"
	if [ "$keep" -gt 0 ]; then
		summary+="  $(keep "$pkg" "$name")"$'\n'
	fi
done <<<"$sel"
echo
echo "== summary"
printf '%s' "$summary"
exit "$status"
