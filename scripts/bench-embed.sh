#!/usr/bin/env bash
# Embedding throughput (issue 22): krafla embed against llama.cpp's
# llama-embedding on the same GGUF (converted to .mlb by krafla, so the same
# Q8_0 weights), for batches of 1, 8 and 32 inputs of 128 tokens each, mean
# pooling, interleaved per row so machine load hits both alike. Prints
# embedded tokens/s and the ratio krafla / llama.cpp. krafla's is the
# embedding call alone (krafla embed -v: no load, no repacking).
# llama-embedding's perf counters do not count batches of several sequences,
# so its figure is the time between its log lines (-lv 4 timestamps) that
# open the embedding batch (batch_decode) and follow it (the perf summary):
# the decode and the printing of the vectors, no load or warm-up.
#
#   scripts/bench-embed.sh [MODEL.gguf]
#
# MODEL: default $BENCH_DIR/smollm2-135m-q8_0.gguf (the 135M shape of
# docs/SPEED.md, written by ../shared/perf/gguf_random_llama.py --vocab spm).
# llama-embedding: $LLAMA_EMBEDDING, else $BENCH_DIR/llama/build/bin (built by
# scripts/bench-llamacpp.sh). Knobs: THREADS (2), REPS (3), BATCHES (1 8 32),
# KRAFLA_TOKENS (tokens per krafla pass, 512).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/krafla/bench}
model=${1:-$dir/smollm2-135m-q8_0.gguf}
threads=${THREADS:-2} reps=${REPS:-3} batches=${BATCHES:-1 8 32} ktok=${KRAFLA_TOKENS:-512}
emb=${LLAMA_EMBEDDING:-$dir/llama/build/bin/llama-embedding}
[ -x "$emb" ] || { echo "bench-embed.sh: no llama-embedding at $emb (set LLAMA_EMBEDDING)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/krafla" ./cmd/krafla
k=$work/krafla
"$k" convert "$model" -o "$work/m.mlb" >/dev/null

# Inputs of exactly 128 tokens (BOS included) under the model's tokenizer:
# random words, cut to 128 tokens and padded with one-token letters.
python3 - "$k" "$work/m.mlt" >"$work/in.txt" <<'EOF'
import json, random, subprocess, sys
k, mlt = sys.argv[1], sys.argv[2]
random.seed(7)
words = ("the cat sat on a mat and the dog ran in the park while birds sang songs of "
         "morning light over hills rivers trees people walked slowly home after long days work").split()
lines = [" ".join(random.choice(words) for _ in range(200)) for _ in range(32)]
def counts(texts):
    inp = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = subprocess.run([k, "encode", "-t", mlt, "--jsonl"], input=inp.encode(), capture_output=True, check=True).stdout
    return [len(json.loads(l)["ids"]) for l in out.decode().split("\n") if l]
lo, hi = [1] * 32, [len(l) for l in lines]
for _ in range(12):
    mid = [(a + b) // 2 for a, b in zip(lo, hi)]
    for i, c in enumerate(counts([l[:m] for l, m in zip(lines, mid)])):
        if c <= 128: lo[i] = mid[i]
        else: hi[i] = mid[i]
res = [l[:m] for l, m in zip(lines, lo)]
res = [r + "s" * (128 - c) for r, c in zip(res, counts(res))]
assert counts(res) == [128] * 32, counts(res)
print("\n".join(res))
EOF

echo "model $(basename "$model"), $threads threads, mean pooling, inputs of 128 tokens; embedded tokens/s (best of $reps)"
echo
echo "| inputs | tokens | krafla ($ktok tokens a pass) | llama-embedding | krafla / llama.cpp |"
echo "|---:|---:|---:|---:|---:|"
for n in $batches; do
	head -n "$n" "$work/in.txt" >"$work/b.txt"
	tok=$((n * 128))
	kbest=0 lbest=0
	for _ in $(seq "$reps"); do
		kr=$("$k" embed "$work/m.mlb" -f "$work/b.txt" --pooling mean --threads "$threads" --batch-tokens "$ktok" -v 2>&1 >/dev/null |
			sed -n 's/.* \([0-9.]*\) tokens\/s.*/\1/p')
		ctx=$((tok < 256 ? 256 : tok)) # llama.cpp asserts on a 128-token context here
		lr=$("$emb" -m "$model" -f "$work/b.txt" --pooling mean -t "$threads" -c "$ctx" -b "$ctx" -ub "$ctx" -np "$n" \
			--perf -lv 4 2>&1 >/dev/null | python3 -c '
import re, sys
ts = lambda l: sum(float(x) * f for x, f in zip(l.split()[0].split("."), (60, 1, 1e-3, 1e-6)))
lines = sys.stdin.read().split("\n")
i = max(k for k, l in enumerate(lines) if "batch_decode: n_tokens" in l)
d = ts(lines[i + 1]) - ts(lines[i])
print(int(re.search(r"n_tokens = (\d+)", lines[i]).group(1)) / d)')
		kbest=$(python3 -c "print(max($kbest, ${kr:-0}))")
		lbest=$(python3 -c "print(max($lbest, ${lr:-0}))")
	done
	ratio=$(python3 -c "print('%.2f' % ($kbest / $lbest) if $lbest else 'n/a')")
	printf '| %d | %d | %.1f | %.1f | %s |\n' "$n" "$tok" "$kbest" "$lbest" "$ratio"
done
