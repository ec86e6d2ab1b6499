#!/usr/bin/env bash
# The grammar's cost against a token's (issue 21, item 2), and llama.cpp's
# grammar sampling on the same schema, models and prompt, in one run.
#
#   scripts/bench-grammar.sh [WORKDIR]     (default /tmp/krafla-bench-grammar)
#
# Needs ../shared (tokenizers), python3, and for the llama.cpp rows its
# llama-server in $LLAMA (default ~/.cache/krafla/bench/llama/build/bin, as
# ../shared/PERF.md builds it). Every figure is CPU time, not wall time, so a
# loaded machine measures the same work: krafla run -v's "cpu:" line (prefill
# and generation, not loading: wait4's rusage of the whole process where it is
# missing), llama-server's from /proc/PID/task/*/schedstat around each request. The
# cost per token of the model with and without the grammar is (CPU of a run
# of -n N − CPU of a run of -n 1) / (tokens − 1), so loading, the prompt and
# the grammar's compilation cancel out; both engines use one thread.
#
# Models: random weights (krafla synth), real tokenizers: stories15m's shape
# with llama2's 32k vocabulary (Q8_0: a cheap forward, so the grammar's share
# shows), the same with gpt-oss's 201088 rows and o200k tokenizer (Q8_0),
# llama-3.2-1b's shape with llama3's 128k (Q4_0), and smollm2-135m's shape
# (Q4_0, krafla bench only: no tokenizer of its 49k vocabulary here).
# PARTS="mask bench krafla llama" and MODELS="s135 s15 s201 l1b" pick what
# runs (default: all).
# The mask alone at 32k, 128k, 151k, 200k and 262k: go test ./grammar -bench
# Generate (thread CPU time per token over random-weight generations).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SHARED=${KRAFLA_SHARED:-$(dirname "$ROOT")/shared}
LLAMA=${LLAMA:-$HOME/.cache/krafla/bench/llama/build/bin}
W=${1:-/tmp/krafla-bench-grammar}
N=${N:-64}      # tokens per measured run
REPS=${REPS:-3} # runs of each kind (the median is reported)
PARTS=${PARTS:-"mask bench krafla llama"} # what to measure
mkdir -p "$W"
for d in tokenizers/llama2 tokenizers/llama3 tokenizers-next/gptoss; do
	[ -d "$SHARED/$d" ] || { echo "bench-grammar: $SHARED/$d not found (set KRAFLA_SHARED)" >&2; exit 1; }
done

go build -o "$W/krafla" ./cmd/krafla
K=$W/krafla
model() { # name arch shape type tokenizer (a folder of $SHARED, or "")
	local m=$W/$1
	[ -f "$m.gguf" ] && return
	"$K" synth "$2" --shape "$3" -o "$m.hf" >/dev/null
	[ -n "$5" ] && cp "$SHARED/$5/"tokenizer*.json "$m.hf/"
	"$K" convert "$m.hf" -o "$m.mlb" --type "$4" --f16-scales >/dev/null
	rm -rf "$m.hf"
	"$K" export "$m.mlb" -o "$m.gguf" >/dev/null
}
model s15 llama stories15m q8_0 tokenizers/llama2
model s201 llama stories15m-201k q8_0 tokenizers-next/gptoss
model l1b llama3 llama-3.2-1b q4_0 tokenizers/llama3
model s135 llama smollm2-135m q4_0 ""

cat >"$W/schema.json" <<'EOF'
{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
"tags":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":4},"born":{"type":"string","format":"date"},
"kind":{"enum":["cat","dog","bird"]}},"required":["name","age","kind"],"additionalProperties":false}
EOF

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ $PARTS == *mask* ]]; then
	echo "== mask alone (go test ./grammar -bench Generate -benchtime 10x)"
	go test ./grammar -run XXX -bench Generate -benchtime 10x | grep Benchmark
fi
if [[ $PARTS == *bench* ]]; then
	echo "== the 135M shape's generation (krafla bench, 1 thread; wall time)"
	"$K" bench "$W/s135.mlb" -p 0 -n 64 --threads 1 -r "$REPS"
fi

python3 - "$W" "$N" "$REPS" "$LLAMA" "$PARTS" <<'EOF'
import json, os, statistics, subprocess, sys, time, urllib.error, urllib.request
W, N, REPS, LLAMA, PARTS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
K, schema = W + "/krafla", open(W + "/schema.json").read()
prompt = "Describe a pet as JSON:"

def krafla(model, n, grammar, seed):
    args = [K, "run", f"{W}/{model}.mlb", "-p", prompt, "-n", str(n), "--seed", str(seed), "--threads", "1", "-v"]
    if grammar:
        args += ["--json-schema", W + "/schema.json"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"krafla run failed: {err[-500:]}")
    toks = [l for l in err.splitlines() if l.startswith("generation:")]
    k = int(toks[0].split()[1]) + 1 if toks else 1  # + the first token (sampled from the prompt)
    cpu = [l for l in err.splitlines() if l.startswith("cpu:")]  # prefill and generation alone: no loading
    return (float(cpu[0].split()[1]) if cpu else ru.ru_utime + ru.ru_stime), k

def tasks_cpu(pid):
    t = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            t += int(f.read().split()[0])
    return t / 1e9

def llama(port, pid, n, grammar, seed):
    body = {"prompt": prompt, "n_predict": n, "seed": seed, "cache_prompt": False}
    if grammar:
        body["json_schema"] = json.loads(schema)
    c0 = tasks_cpu(pid)
    try:
        r = urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/completion",
            data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}), timeout=600)
    except urllib.error.HTTPError as e:  # llama-server sometimes fails to parse a random model's output
        print("  llama-server: %s" % e.read()[:200], file=sys.stderr)
        return None
    out = json.loads(r.read())
    return tasks_cpu(pid) - c0, out["tokens_predicted"]

def per_token(run):  # CPU per token beyond the first, median over REPS pairs
    xs = []
    for s in range(REPS):
        a, b = run(1, s), run(N, s)
        if a is None or b is None:
            continue
        (c1, k1), (cn, kn) = a, b
        if kn > k1:
            xs.append((cn - c1) / (kn - k1))
        print("  run %d: -n 1: %.3f s CPU, %d tokens; -n %d: %.3f s CPU, %d tokens" % (s, c1, k1, N, cn, kn), file=sys.stderr)
    return statistics.median(xs) * 1e3 if xs else float("nan")

rows = []
nan = float("nan")
for model, vocab in [("s135", "synthetic 49k (token time only)"), ("s15", "llama2 32k"), ("s201", "gpt-oss 200k"),
                     ("l1b", "llama3 128k")]:
    if model not in os.environ.get("MODELS", "s135 s15 s201 l1b").split():
        continue
    row = [model, vocab, nan, nan, nan, nan]
    print("== %s" % model, file=sys.stderr)
    if "krafla" in PARTS:
        row[2] = per_token(lambda n, s: krafla(model, n, False, s))
        if model != "s135":
            row[3] = per_token(lambda n, s: krafla(model, n, True, s))
    srv = os.path.join(LLAMA, "llama-server")
    if "llama" in PARTS and model != "s135" and not os.path.exists(srv):
        print("bench-grammar: %s not found: no llama.cpp rows" % srv, file=sys.stderr)
    if "llama" in PARTS and model != "s135" and os.path.exists(srv):
        port = 18181
        p = subprocess.Popen([srv, "-m", f"{W}/{model}.gguf", "-t", "1", "-tb", "1", "-c", "1024", "-np", "1",
                              "--port", str(port), "--no-webui"], stdout=subprocess.DEVNULL, stderr=open(f"{W}/llama-{model}.log", "w"))
        try:
            for _ in range(600):
                try:
                    if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2).status == 200:
                        break
                except Exception:
                    time.sleep(0.5)
            row[4] = per_token(lambda n, s: llama(port, p.pid, n, False, s))
            row[5] = per_token(lambda n, s: llama(port, p.pid, n, True, s))
        finally:
            p.terminate()
            p.wait()
    rows.append(row)

print("== CPU ms per generated token (1 thread), median of %d; grammar = the same run with the schema" % REPS)
print("| model | vocabulary | krafla | krafla + grammar | llama.cpp | llama.cpp + grammar |")
print("|---|---|---|---|---|---|")
for r in rows:
    cells = ["—" if x != x else "%.2f" % x for x in r[2:]]
    print("| %s | %s | %s |" % (r[0], r[1], " | ".join(cells)))
EOF
