#!/usr/bin/env bash
# The pure-Go path against the original one (issue 23, docs/SPEED.md "The
# pure-Go path"): tokens per CPU second of one thread, KRAFLA_KERNEL=generic,
# the 135M shape (krafla synth llama --shape smollm2-135m, --type q4_0).
# The machine is shared, so wall-clock tokens/s mean little: each binary runs
# krafla bench with -r 1 and -r $REPS, and the difference of the two runs'
# process CPU time (user + system), divided by REPS-1, is one repetition's
# (start-up, repacking and warm-up cancel). The binaries run interleaved,
# one after another within each round, so load hits all alike.
#
#   scripts/bench-purego.sh [TREE...]
#
# TREE: checkouts to measure against the old one (default: this repository's
# work tree); each is built with go build ./cmd/krafla. OLD: a checkout of
# a4fb5ee, the original pure-Go path (default /tmp/krafla-a4fb5ee, created with
# git worktree add --detach if missing). The model is made by OLD's convert
# from a synth checkpoint, since a4fb5ee cannot read today's header. Knobs:
# ROUNDS (3), REPS (3), TOKENS (64: tg64 and pp64), WORK (a temporary folder;
# set it to keep the binaries and the model between calls).
set -euo pipefail
cd "$(dirname "$0")/.."
old=${OLD:-/tmp/krafla-a4fb5ee} rounds=${ROUNDS:-3} reps=${REPS:-3} tok=${TOKENS:-64}
[ "$reps" -ge 2 ] || { echo "bench-purego.sh: REPS must be at least 2" >&2; exit 1; }
trees=("$@")
[ ${#trees[@]} -gt 0 ] || trees=("$PWD")
if [ -z "${WORK:-}" ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
else
	work=$WORK
	mkdir -p "$work"
fi
[ -d "$old" ] || git worktree add --detach "$old" a4fb5ee >&2

names=(old) bins=("$work/bin0")
(cd "$old" && go build -o "$work/bin0" ./cmd/krafla)
for i in "${!trees[@]}"; do
	n=$((i + 1))
	(cd "${trees[$i]}" && go build -o "$work/bin$n" ./cmd/krafla)
	names+=("$(git -C "${trees[$i]}" rev-parse --short HEAD)$(git -C "${trees[$i]}" diff --quiet HEAD || echo +)")
	bins+=("$work/bin$n")
done
if [ ! -f "$work/m.mlb" ]; then
	"${bins[1]}" synth llama --shape smollm2-135m -o "$work/ckpt" >/dev/null
	"${bins[0]}" convert "$work/ckpt" --type q4_0 -o "$work/m.mlb" >/dev/null
	rm -rf "$work/ckpt"
fi

# cpu BIN R ARGS...: process CPU seconds of krafla bench -r R.
cpu() {
	local bin=$1 r=$2 t
	shift 2
	TIMEFORMAT='%U %S'
	t=$( { time KRAFLA_KERNEL=generic "$bin" bench "$work/m.mlb" --threads 1 -r "$r" "$@" >/dev/null 2>&1; } 2>&1)
	echo "$t" | awk '{print $1 + $2}'
}
# rate BIN ARGS...: tokens per CPU second of one repetition.
rate() {
	local c1 c2
	c1=$(cpu "$1" 1 "${@:2}")
	c2=$(cpu "$1" "$reps" "${@:2}")
	awk -v a="$c1" -v b="$c2" -v r="$reps" -v n="$tok" 'BEGIN { d = (b - a) / (r - 1); if (d > 0) printf "%.2f", n / d; else print "nan" }'
}

echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs; t/s per CPU second, one thread, KRAFLA_KERNEL=generic"
hdr="| round (UTC, load) | test"
sep="|---|---"
for n in "${names[@]}"; do hdr+=" | $n"; sep+="|---"; done
for n in "${names[@]:1}"; do hdr+=" | $n / old"; sep+="|---"; done
echo "$hdr |"
echo "$sep|"
for r in $(seq "$rounds"); do
	t0=$(date -u +%H:%M) l0=$(cut -d' ' -f1 /proc/loadavg)
	declare -A v=()
	for i in "${!bins[@]}"; do
		v[tg$i]=$(rate "${bins[$i]}" -p 0 -n "$tok")
		v[pp$i]=$(rate "${bins[$i]}" -p "$tok" -n 0)
	done
	load="$t0–$(date -u +%H:%M), $l0–$(cut -d' ' -f1 /proc/loadavg)"
	for t in tg pp; do
		line="| $r ($load) | $t$tok"
		for i in "${!bins[@]}"; do line+=" | ${v[$t$i]}"; done
		for i in "${!bins[@]}"; do
			[ "$i" -eq 0 ] && continue
			line+=" | $(awk -v a="${v[$t$i]}" -v b="${v[${t}0]}" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else print "nan" }')"
		done
		echo "$line |"
	done
	unset v
done
