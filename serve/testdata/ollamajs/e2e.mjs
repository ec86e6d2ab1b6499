// The official ollama client (npm ollama 0.6.3) against krafla serve, as a
// user would drive it (TestOllamaJS):
//   node e2e.mjs HOST
// It prints one line: "RESULT " and JSON of what each call gave.
import { Ollama } from "ollama";

const [host] = process.argv.slice(2);
const ollama = new Ollama({ host });
const out = {};
const opts = { temperature: 0, num_predict: 8, repeat_penalty: 1 };

async function fail(fn) {
  try {
    await fn();
    return { status: 0 };
  } catch (e) {
    return { status: e.status_code ?? -1, name: e.name, error: e.error ?? String(e) };
  }
}

// pull, streamed: the statuses and the last progress of the weights
const statuses = [];
let weights = null;
for await (const p of await ollama.pull({ model: "org/tiny", stream: true })) {
  statuses.push(p.status);
  if (p.digest === "model.safetensors") weights = { total: p.total, completed: p.completed };
}
out.pull = { first: statuses[0], last: statuses[statuses.length - 1], weights };
out.pull2 = await ollama.pull({ model: "karpathy/stories260K", stream: false });

out.list = (await ollama.list()).models.map((m) => ({ name: m.name, size: m.size, quant: m.details.quantization_level }));
const show = await ollama.show({ model: "org/tiny" });
out.show = { template: show.template, capabilities: show.capabilities, layers: show.model_info["krafla.block_count"] };

const messages = [{ role: "user", content: "Hello" }];
const chat = await ollama.chat({ model: "org/tiny", messages, options: opts });
out.chat = { content: chat.message.content, role: chat.message.role, done: chat.done, reason: chat.done_reason, eval: chat.eval_count };
let text = "", last = null, parts = 0;
for await (const part of await ollama.chat({ model: "org/tiny:latest", messages, options: opts, stream: true })) {
  text += part.message.content;
  parts++;
  last = part;
}
out.stream = { content: text, parts, done: last.done, reason: last.done_reason, eval: last.eval_count };

const gen = await ollama.generate({ model: "karpathy/stories260K", prompt: "Once upon a time", raw: true, options: opts });
out.generate = { response: gen.response, reason: gen.done_reason, eval: gen.eval_count, prompt: gen.prompt_eval_count };

// fill-in-the-middle: org/tiny's tokenizer has Qwen2.5-Coder's sentinels
const fim = await ollama.generate({ model: "org/tiny", prompt: "ab", suffix: "cd", options: { ...opts, repeat_penalty: 100, repeat_last_n: -1 } });
out.fim = { response: fim.response, done: fim.done, reason: fim.done_reason, eval: fim.eval_count, prompt: fim.prompt_eval_count };

out.ps = (await ollama.ps()).models.map((m) => m.name).sort();
await ollama.copy({ source: "org/tiny", destination: "me/tiny" });
out.afterCopy = (await ollama.list()).models.map((m) => m.name).sort();
await ollama.delete({ model: "me/tiny" });
out.afterDelete = (await ollama.list()).models.map((m) => m.name).sort();

out.notFound = await fail(() => ollama.chat({ model: "nope/nope", messages }));
out.badOption = await fail(() => ollama.generate({ model: "org/tiny", prompt: "x", options: { temperature: "hot" } }));
out.badPull = await fail(async () => {
  for await (const p of await ollama.pull({ model: "org/missing", stream: true })) {
  }
});
out.noFIM = await fail(() => ollama.generate({ model: "karpathy/stories260K", prompt: "x", suffix: "y" }));
out.version = (await ollama.version()).version;
console.log("RESULT " + JSON.stringify(out));
