// embed.mjs: llama.cpp's embedding (node-llama-cpp's getEmbeddingFor, with
// the pooling type the GGUF states) of each token-id list of IDS.json, for
// each model and its ids, printed as a JSON array (per model) of arrays of
// vectors.
//
//   node embed.mjs MODEL.gguf IDS.json [MODEL.gguf IDS.json ...]
//
// Run it from a folder where `npm install node-llama-cpp@3.21.1` was done. It
// uses the CPU build and never compiles llama.cpp.
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";

const args = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const out = [];
for (let a = 0; a + 1 < args.length; a += 2) {
    const inputs = JSON.parse(fs.readFileSync(args[a + 1], "utf8"));
    const model = await llama.loadModel({modelPath: args[a]});
    const context = await model.createEmbeddingContext({contextSize: 256, batchSize: 256, threads: 1});
    const vecs = [];
    for (const ids of inputs) {
        vecs.push(Array.from((await context.getEmbeddingFor(ids)).vector));
    }
    out.push(vecs);
    await context.dispose();
    await model.dispose();
}
process.stdout.write(JSON.stringify(out));
