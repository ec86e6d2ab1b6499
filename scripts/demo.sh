#!/usr/bin/env bash
# Builds krafla and shows the whole path: the real stories260K model from
# testdata/stories260K (in the repository) is converted and tells its story; then a
# random-weight Hugging Face style checkpoint is synthesised, converted to Q8_0
# and Q4_0, inspected, validated and run. Everything goes into ./demo (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-demo}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "build"
go build -o krafla ./cmd/krafla
mkdir -p "$out"

# A real trained model, in the repository (or $KRAFLA_SHARED/models).
stories=testdata/stories260K
[ -n "${KRAFLA_SHARED:-}" ] && stories=$KRAFLA_SHARED/models/stories260K
if [ -d "$stories" ]; then
	step "a real model: stories260K from $stories"
	echo "Karpathy's llama2.c stories260K, trained on TinyStories (MIT licence; origin and layout in"
	echo "testdata/stories260K/README.md): dim 64, 5 layers, FFN 172, vocabulary 512."
	./krafla convert "$stories" -o "$out/stories260K.mlb"

	# 117 tokens end a sentence (the author's own sample: ../shared/models/README.md).
	step "tell a story: greedy (temperature 0) from BOS alone"
	./krafla run "$out/stories260K.mlb" --temp 0 -n 117
else
	step "no real model: $stories is absent, so only the synthetic path runs"
fi

step "synthesise a tiny Llama 3 style checkpoint (random weights)"
./krafla synth llama3 -o "$out/checkpoint"
ls -l "$out/checkpoint"

step "convert to Q8_0 and to Q4_0 (best fit), with the tokenizer"
./krafla convert "$out/checkpoint" -o "$out/model-q8.mlb" --type q8_0
./krafla convert "$out/checkpoint" -o "$out/model-q4.mlb" --type q4_0 --no-tokenizer

step "inspect"
./krafla inspect "$out/model-q4.mlb"
./krafla inspect "$out/model-q8.mlt"

step "validate a damaged copy (a loader error and exit status 1 are expected)"
head -c 1000 "$out/model-q8.mlb" > "$out/truncated.mlb"
if ./krafla inspect "$out/truncated.mlb" >/dev/null; then
	echo "demo: a truncated file passed validation" >&2; exit 1
else
	echo "exit status $? as expected"
fi

step "tokenize"
./krafla encode -t "$out/model-q8.mlt" "Hello world"

step "run (random weights: the text is noise, the speed is real)"
./krafla run "$out/model-q8.mlb" -p "Once upon a time" -n 24 --seed 7 --temp 0.8
./krafla bench "$out/model-q4.mlb" -p 64 -n 16 -r 2

step "done: files in $out/"
