#!/bin/sh
# Aggregate generation speed of krafla serve with 1, 2, 4 and 8 concurrent
# streams (serve's BenchmarkStreams) on a synthetic model of the SmolLM2-135M
# shape (random weights, Q8_0). Usage: scripts/serve-bench.sh [WORKDIR]
# Extra flags for go test come from $BENCHFLAGS (default: -benchtime 3x).
set -eu
cd "$(dirname "$0")/.."
work=${1:-${TMPDIR:-/tmp}/krafla-serve-bench}
mkdir -p "$work"
if [ ! -f "$work/smollm2.mlb" ]; then
	go run ./cmd/krafla synth llama --shape smollm2-135m -o "$work/ck"
	go run ./cmd/krafla convert "$work/ck" -o "$work/smollm2.mlb"
fi
KRAFLA_BENCH_MODEL="$work/smollm2.mlb" go test ./serve -run '^$' -bench Streams ${BENCHFLAGS:--benchtime 3x}
