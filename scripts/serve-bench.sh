#!/bin/sh
# Aggregate generation speed of krafla serve with 1, 2, 4 and 8 concurrent
# streams (serve's BenchmarkStreams) on a synthetic model of the SmolLM2-135M
# shape (random weights, Q8_0). With LLAMA_SERVER=/path/to/llama-server the
# same clients then load llama-server --parallel N on the model exported as
# GGUF, each N in turn. Usage: scripts/serve-bench.sh [WORKDIR]
# Extra flags for go test come from $BENCHFLAGS (default: -benchtime 3x).
set -eu
cd "$(dirname "$0")/.."
work=${1:-${TMPDIR:-/tmp}/krafla-serve-bench}
mkdir -p "$work"
go build -o "$work/krafla" ./cmd/krafla
if [ ! -f "$work/smollm2.mlb" ]; then
	"$work/krafla" synth llama --shape smollm2-135m -o "$work/ck"
	"$work/krafla" convert "$work/ck" -o "$work/smollm2.mlb"
fi
flags=${BENCHFLAGS:--benchtime 3x}
KRAFLA_BENCH_MODEL="$work/smollm2.mlb" go test ./serve -run '^$' -bench Streams $flags

[ -n "${LLAMA_SERVER:-}" ] || exit 0
[ -f "$work/smollm2.gguf" ] || "$work/krafla" export "$work/smollm2.mlb" -o "$work/smollm2.gguf"
port=18190
threads=$(getconf _NPROCESSORS_ONLN)
for n in 1 2 4 8; do
	# llama-server splits -c across its slots: 512 positions each, as krafla's --ctx 512.
	"$LLAMA_SERVER" -m "$work/smollm2.gguf" --parallel "$n" -c $((512 * n)) -t "$threads" \
		--host 127.0.0.1 --port "$port" >"$work/llama-server.log" 2>&1 &
	pid=$!
	i=0
	until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || { kill "$pid"; echo "llama-server did not start" >&2; exit 1; }
		sleep 0.2
	done
	# One small request first: the first benchmark request right after
	# /health once got a closed connection (EOF) from llama-server.
	curl -s "http://127.0.0.1:$port/v1/completions" -d '{"prompt":"x","max_tokens":1}' >/dev/null || true
	KRAFLA_BENCH_MODEL="$work/smollm2.mlb" KRAFLA_BENCH_URL="http://127.0.0.1:$port" KRAFLA_BENCH_STREAMS="$n" \
		go test ./serve -run '^$' -bench Streams $flags | sed "s/BenchmarkStreams/llama-server/"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
done
