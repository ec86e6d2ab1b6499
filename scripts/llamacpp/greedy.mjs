// greedy.mjs: run a GGUF file in llama.cpp (through node-llama-cpp) and print,
// as JSON, the greedy tokens from the given start tokens and the natural-log
// probabilities of every vocabulary entry at each step (softmax of the logits:
// temperature 1, no top-k/top-p/min-p, no penalties).
//
//   node greedy.mjs MODEL.gguf STEPS START_ID[,START_ID...] [TEXTS.json]
//
// With TEXTS.json (a JSON array of strings) it also prints llama.cpp's
// tokenization of each text (special tokens parsed, no BOS added) as
// "tokenized".
//
// Run it from a folder where `npm install node-llama-cpp@3.21.1` was done
// (NODE_PATH or a node_modules above). It uses the CPU build and never
// compiles llama.cpp.
import {getLlama} from "node-llama-cpp";

const [modelPath, stepsArg, startArg, textsPath] = process.argv.slice(2);
const steps = parseInt(stepsArg, 10);
const start = startArg.split(",").map((s) => parseInt(s, 10));

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
// An F32 KV cache and no flash attention: the defaults (F16 cache, flash
// attention where available) round keys, values and queries to f16.
const context = await model.createContext({contextSize: Math.max(64, start.length + steps + 8), batchSize: 512, threads: 1,
    flashAttention: process.env.NLC_DEFAULTS ? "auto" : false,
    experimentalKvCacheKeyType: process.env.NLC_DEFAULTS ? undefined : "F32",
    experimentalKvCacheValueType: process.env.NLC_DEFAULTS ? undefined : "F32"});
const seq = context.getSequence();
let nVocab = 0;

const out = {tokens: [], logprobs: []};
let input = start;
for (let s = 0; s < steps; s++) {
    const it = seq.evaluateWithMetadata(input, {probabilities: true},
        {temperature: 1, topK: 0, topP: 1, minP: 0, repeatPenalty: false, yieldEogToken: true, seed: 1});
    const {value} = await it.next();
    await it.return();
    if (!nVocab) nVocab = value.probabilities.size;
    const lp = new Array(nVocab).fill(null);
    let best = -1, bestP = -1;
    for (const [tok, p] of value.probabilities) {
        if (tok < nVocab) lp[tok] = p > 0 ? Math.log(p) : null;
        if (p > bestP || (p === bestP && tok < best)) { best = tok; bestP = p; }
    }
    out.tokens.push(best);
    out.logprobs.push(lp);
    input = [best];
}
if (textsPath) {
    const fs = await import("node:fs");
    out.tokenized = JSON.parse(fs.readFileSync(textsPath, "utf8")).map((t) => Array.from(model.tokenize(t, true)));
}
console.log(JSON.stringify(out));
await context.dispose();
await model.dispose();
