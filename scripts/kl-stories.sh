#!/usr/bin/env bash
# Reproduces docs/FORMATS.md's KL table: stories260K (testdata/, FFN padded
# to 192 so every matrix takes blocks of 32) quantized by krafla (convert,
# then export to GGUF) and by llama.cpp's llama-quantize (from the padded
# F32 GGUF), each type with and without one importance matrix, every file
# measured by llama.cpp's llama-perplexity --kl-divergence against the F32
# model (context 256). It runs convert's TestStoriesKL, which says how the
# texts are made (stories sampled from the model: calibration seeds 1, 2, …,
# evaluation seeds from 1000, so the quantizers never see it).
#
#   scripts/kl-stories.sh
#
# llama-quantize and llama-perplexity: from $LLAMA_BIN if set, else from the
# llama.cpp build scripts/bench-llamacpp.sh makes ($BENCH_DIR/llama/build/bin,
# default ~/.cache/krafla/bench; the two targets are built there if missing).
# Knobs: KRAFLA_KL_EVAL (evaluation tokens, 12288), KRAFLA_KL_CAL
# (calibration tokens, 4096), KRAFLA_KL_DIR (keep the files there).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/krafla/bench}
bin=${LLAMA_BIN:-$dir/llama/build/bin}
if ! [ -x "$bin/llama-quantize" ] || ! [ -x "$bin/llama-perplexity" ]; then
	[ -n "${LLAMA_BIN:-}" ] && { echo "kl-stories.sh: no llama-quantize and llama-perplexity in $bin" >&2; exit 1; }
	BUILD_ONLY=1 scripts/bench-llamacpp.sh >/dev/null
	cmake --build "$dir/llama/build" --target llama-quantize llama-perplexity -j"$(nproc)" >/dev/null
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
KRAFLA_LLAMA_QUANTIZE=$bin/llama-quantize go test ./convert -run 'TestStoriesKL$' -count=1 -v -timeout 3h >"$log" 2>&1 || rc=$?
if grep -q 'KL divergence against the F32 model' "$log"; then
	sed -n '/KL divergence against the F32 model/,/^---/p' "$log"
else
	tail -n 40 "$log"
fi
grep -q -- '--- SKIP' "$log" && { grep -A2 -- '--- SKIP' "$log"; exit 1; }
exit $rc
