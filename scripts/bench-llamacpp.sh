#!/usr/bin/env bash
# Reproduces docs/SPEED.md's comparison: krafla bench and llama-bench
# interleaved per row on the same random-weight GGUF files, printed as
# SPEED.md's table (tokens/s, llama.cpp / krafla = ratio krafla ÷ llama.cpp).
#
#   scripts/bench-llamacpp.sh [MODEL.gguf...]
#
# llama-bench: $LLAMA_BENCH if set, else built once from the llama.cpp source
# node-llama-cpp 3.21.1 bundles (npm, cmake; GGML_NATIVE=ON, Release; about
# 15-20 minutes on 2 vCPUs) into $BENCH_DIR/llama (default
# ${XDG_CACHE_HOME:-~/.cache}/krafla/bench); LLAMA_NATIVE=OFF LLAMA_FLAGS=...
# make e.g. the AVX2-only build, as ../shared/perf/build-llamacpp.sh does.
# Models: the GGUF files given, else the SpeedD shapes written by
# ../shared/perf/gguf_random_llama.py --vocab spm (needs python3-numpy):
# smollm2-135m and llama-3.2-1b, q4_0 and q8_0.
# Knobs: PP (512), TG (128), REPS (3), THREADS (1,2), DEPTH (empty; e.g. 4096
# adds the rows at that depth, krafla with --kv f16 as llama.cpp's default),
# KRAFLA_KERNEL (passed through: avx2 for the AVX2 rows), KIND (the table's
# first column, default the krafla kernel).
# CONVERT_FLAGS (e.g. "--type keep" for Q4_K_M, Q6_K or IQ4_XS files, so krafla
# runs the file's own blocks) are passed to krafla convert.
# BUILD_ONLY=1 only builds llama-bench and prints its path.
# KRAFLA_BIN: the krafla binary to measure (default: go build of this tree).
# KRAFLA_BINS="LABEL=PATH LABEL=PATH ...": measure several krafla builds on the
# same files, interleaved per model (the first, llama-bench, then the others),
# one row each with LABEL as its kind, all against that one llama-bench run.
# PP=0 or TG=0 skips that test in both (e.g. PP=0 TG=128: generation only).
# The load average before each model goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/krafla/bench}
mkdir -p "$dir"
pp=${PP:-512} tg=${TG:-128} reps=${REPS:-3} threads=${THREADS:-1,2}

bench=${LLAMA_BENCH:-}
if [ -z "$bench" ]; then
	b=$dir/llama
	bench=$b/build/bin/llama-bench
	if ! [ -x "$bench" ]; then
		for c in npm git cmake c++; do
			command -v $c >/dev/null || { echo "bench-llamacpp.sh: $c is needed to build llama-bench (or set LLAMA_BENCH)" >&2; exit 1; }
		done
		mkdir -p "$b/npm"
		[ -d "$b/npm/node_modules/node-llama-cpp" ] ||
			(cd "$b/npm" && npm init -y >/dev/null && npm i -E --ignore-scripts --omit=optional --no-audit --no-fund node-llama-cpp@3.21.1 >/dev/null)
		[ -d "$b/src" ] || git clone -q "$b/npm/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$b/src"
		[ -f "$b/build/CMakeCache.txt" ] || cmake -S "$b/src" -B "$b/build" -DCMAKE_BUILD_TYPE=Release \
			-DGGML_NATIVE="${LLAMA_NATIVE:-ON}" -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF ${LLAMA_FLAGS:-} >/dev/null
		cmake --build "$b/build" --target llama-bench -j"$(nproc)" >/dev/null
	fi
fi
[ -x "$bench" ] || { echo "bench-llamacpp.sh: no llama-bench at $bench" >&2; exit 1; }
export LD_LIBRARY_PATH=$(dirname "$bench")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ "${BUILD_ONLY:-}" = 1 ]; then echo "$bench"; exit 0; fi

labels=() bins=()
if [ -n "${KRAFLA_BINS:-}" ]; then
	for kb in $KRAFLA_BINS; do
		[ "${kb#*=}" != "$kb" ] || { echo "bench-llamacpp.sh: KRAFLA_BINS wants LABEL=PATH, not $kb" >&2; exit 1; }
		labels+=("${kb%%=*}") bins+=("${kb#*=}")
	done
elif [ -n "${KRAFLA_BIN:-}" ]; then
	labels=("${KIND:-${KRAFLA_KERNEL:-native}}") bins=("$KRAFLA_BIN")
else
	labels=("${KIND:-${KRAFLA_KERNEL:-native}}") bins=("$dir/krafla")
	go build -o "$dir/krafla" ./cmd/krafla
fi
for b in "${bins[@]}"; do [ -x "$b" ] || { echo "bench-llamacpp.sh: no krafla binary at $b" >&2; exit 1; }; done
krafla=${bins[0]}

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
	gen=$root/../shared/perf/gguf_random_llama.py
	[ -f "$gen" ] || { echo "bench-llamacpp.sh: give GGUF files, or have $gen" >&2; exit 1; }
	for shape in smollm2-135m llama-3.2-1b; do
		for q in q4_0 q8_0; do
			m=$dir/$shape-$q.gguf
			[ -f "$m" ] || /usr/bin/python3 "$gen" --shape "$shape" --quant "$q" --vocab spm --out "$m" >&2
			models+=("$m")
		done
	done
fi

# krafla's table (model weights kernel threads test t/s min max; test may be
# "pp512 @ d4096") and llama-bench's CSV, each as "test|threads|t/s" lines.
kr() {
	local bin=$1; shift
	"$bin" bench "$@" 2>/dev/null | awk 'NR > 1 {
		if ($(NF-4) == "@") print $(NF-5) " @ " $(NF-3) "|" $(NF-6) "|" $(NF-2)
		else print $(NF-3) "|" $(NF-4) "|" $(NF-2) }'
}
lb() {
	"$bench" "$@" -o csv 2>/dev/null | awk -F, '
		{ for (i = 1; i <= NF; i++) gsub(/"/, "", $i) }
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ t = ($c["n_prompt"] > 0 ? "pp" $c["n_prompt"] : "tg" $c["n_gen"])
		  if (("n_depth" in c) && $c["n_depth"] > 0) t = t " @ d" $c["n_depth"]
		  print t "|" $c["n_threads"] "|" $c["avg_ts"] }'
}
# row KIND SHAPE LLAMA KRAFLA: one table row per test, "llama / krafla = ratio"
# for 1 and 2 threads.
row() {
	{ sed 's/^/L|/' <<<"$3"; sed 's/^/K|/' <<<"$4"; } | awk -F'|' -v kind="$1" -v shape="$2" '
		NF == 4 { v[$1, $2, $3] = $4; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
		END { for (i = 1; i <= n; i++) { t = order[i]; printf "| %s | %s | %s |", kind, shape, t
			for (th = 1; th <= 2; th++)
				if (("L", t, th) in v && ("K", t, th) in v && v["L", t, th] > 0)
					printf " %.1f / %.1f = **%.2f** |", v["L", t, th], v["K", t, th], v["K", t, th] / v["L", t, th]
				else printf " – |"
			print "" } }'
}

echo "| kind | shape | test | 1 thread | 2 threads |"
echo "|---|---|---|---|---|"
for m in "${models[@]}"; do
	name=$(basename "$m" .gguf)
	mlb=$dir/$name.mlb
	[ -f "$mlb" ] || "$krafla" convert "$m" -o "$mlb" ${CONVERT_FLAGS:-} >&2
	echo "bench-llamacpp.sh: $name $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	ks=()
	for i in "${!bins[@]}"; do
		ks[i]=$(kr "${bins[i]}" "$mlb" -p "$pp" -n "$tg" --threads "$threads" -r "$reps")
		[ "$i" -gt 0 ] || l=$(lb -m "$m" -p "$pp" -n "$tg" -t "$threads" -r "$reps")
	done
	for i in "${!bins[@]}"; do row "${labels[i]}" "$name" "$l" "${ks[i]}"; done
	if [ -n "${DEPTH:-}" ]; then
		ks=()
		for i in "${!bins[@]}"; do
			ks[i]=$(kr "${bins[i]}" "$mlb" -p "$pp" -n "$tg" --depth "$DEPTH" --kv f16 --threads "$threads" -r 1)
			[ "$i" -gt 0 ] || l=$(lb -m "$m" -p "$pp" -n "$tg" -d "$DEPTH" -t "$threads" -r 1)
		done
		for i in "${!bins[@]}"; do row "${labels[i]}" "$name" "$l" "${ks[i]}"; done
	fi
done
