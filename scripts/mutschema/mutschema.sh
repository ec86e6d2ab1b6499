#!/usr/bin/env bash
# Mutation testing from a mutant schema: every mutant gremlins v0.6.0 makes
# with its default mutators in one file is compiled into one copy of the
# package and chosen at run time (KRAFLA_MUT=id), so the package is built once
# and each mutant costs one test run instead of a build and a run (on a loaded
# machine, 10-50 times faster than scripts/mutate.sh). Not part of CI.
#
#   scripts/mutschema/mutschema.sh PKG FILE [ID...]
#     PKG: package directory (mlt), FILE: file name in it (format.go); IDs:
#     only those mutants (default: all). Environment: MUT_OUT (results,
#     default /tmp/mutschema-out), MUT_SKIP / MUT_RUN (-test.skip / -test.run
#     regexps), MUT_PAR (parallel runs, default 2), MUT_TIMEOUT (seconds a
#     mutant's run may take, default 300), MUT_TAGS (build tags).
#
# Writes $MUT_OUT/FILE.list (id, file:line:col, mutator, from, to, note:
# NOT_VIABLE for string +, CONST/UNTYPED for constant expressions, which cannot
# be switched at run time and are left out) and $MUT_OUT/FILE.result (id,
# KILLED / LIVED / TIMED_OUT / NOT_COVERED, seconds, first failing test), then
# prints the counts. Not covered: the baseline run (KRAFLA_MUT=0, which must
# pass) never evaluates the expression. The tool (main.go, its own module,
# golang.org/x/tools) is built on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pkg=${1:?package dir}; file=${2:?file}; shift 2
out=${MUT_OUT:-/tmp/mutschema-out}; mkdir -p "$out"
base=${file%.go}
tool=$out/mutschema-tool
[ -x "$tool" ] || (cd "$here" && GOFLAGS=-mod=mod go build -o "$tool" .)
tree=$out/tree-$base
rm -rf "$tree" && mkdir -p "$tree"
(cd "$root" && git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$tree")
cd "$tree/$pkg"
"$tool" -dir . -file "$file" -out "$out/$file.schema" -list "$out/$file.list"
cp "$out/$file.schema" "$file"
name=$(sed -n 's/^package \([a-z0-9_]*\).*/\1/p' "$file" | head -1)
sed "s/^package PKGNAME$/package $name/" "$here/zz_mut.go.txt" > zz_mut.go
bin=$out/$base.test
nice -n 10 go test -c -vet=off ${MUT_TAGS:+-tags "$MUT_TAGS"} -o "$bin" .
[ -n "${KRAFLA_SHARED:-}" ] || [ ! -d "$root/../shared" ] || export KRAFLA_SHARED="$(cd "$root/../shared" && pwd)"
export GOMAXPROCS=1
args=(-test.count=1)
[ -z "${MUT_SKIP:-}" ] || args+=("-test.skip=$MUT_SKIP")
[ -z "${MUT_RUN:-}" ] || args+=("-test.run=$MUT_RUN")
res=$out/$file.result
rm -f "$res.reach"
KRAFLA_MUT=0 KRAFLA_MUT_REACH=$res.reach nice -n 10 "$bin" "${args[@]}" > "$res.base" 2>&1 || { echo "baseline fails: $res.base" >&2; exit 1; }
touch "$res.reach"
ids=("$@"); [ ${#ids[@]} -gt 0 ] || mapfile -t ids < <(awk -F'\t' '$6=="-"{print $1}' "$out/$file.list")
: > "$res"
export bin res
export MUT_TIMEOUT=${MUT_TIMEOUT:-300}
for id in "${ids[@]}"; do
	if grep -qx "$id" "$res.reach"; then echo "$id"; else printf '%s\tNOT_COVERED\n' "$id" >> "$res"; fi
done | xargs -r -P "${MUT_PAR:-2}" -I{} bash -c '
	id=$1; shift; t0=$(date +%s); rc=0
	KRAFLA_MUT=$id timeout "$MUT_TIMEOUT" nice -n 10 "$bin" -test.failfast "$@" > "$res.log.$id" 2>&1 || rc=$?
	case $rc in 0) st=LIVED;; 124) st=TIMED_OUT;; *) st=KILLED;; esac
	fail=$(grep -m1 -E "^--- FAIL|^panic:" "$res.log.$id" | cut -c1-80 || true)
	printf "%s\t%s\t%ss\t%s\n" "$id" "$st" "$(( $(date +%s) - t0 ))" "$fail" >> "$res"
	[ "$st" != KILLED ] || rm -f "$res.log.$id"' _ {} "${args[@]}"
awk -F'\t' '{n[$2]++} END {for (s in n) printf "%s %d\n", s, n[s]}' "$res" | sort
awk -F'\t' '$6!="-"{n[$6]++} END {for (s in n) printf "%s %d (not run)\n", s, n[s]}' "$out/$file.list"
