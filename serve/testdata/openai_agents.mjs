// Drives krafla serve with the official openai client as an agent app does:
// chat.completions.parse() with a strict json_schema, .stream() with a
// required tool call, runTools() with a named tool, then a turn carrying the
// tool's result back as a role "tool" message. Prints one JSON report.
import OpenAI from "openai";

const [url, model] = process.argv.slice(-2); // node -e: no script path in argv
const client = new OpenAI({ baseURL: url, apiKey: "none" });
const report = {};

const schema = {
  type: "object",
  properties: { ok: { type: "boolean" }, n: { type: "integer", minimum: 1, maximum: 3 } },
  required: ["ok", "n"],
  additionalProperties: false,
};
const parsed = await client.chat.completions.parse({
  model, seed: 1, temperature: 1, max_completion_tokens: 400,
  messages: [{ role: "user", content: "Answer in JSON." }],
  response_format: { type: "json_schema", json_schema: { name: "answer", strict: true, schema } },
});
report.parsed = parsed.choices[0].message.parsed;
report.parsedFinish = parsed.choices[0].finish_reason;

const tools = [{
  type: "function",
  function: {
    name: "pick", description: "Pick a number",
    parameters: { type: "object", properties: { n: { type: "integer", minimum: 0, maximum: 9 } }, required: ["n"], additionalProperties: false },
  },
}];
const stream = client.chat.completions.stream({
  model, seed: 2, temperature: 1, max_completion_tokens: 400, tools, tool_choice: "required", parallel_tool_calls: false,
  messages: [{ role: "user", content: "Pick one." }],
});
let deltas = 0;
stream.on("chunk", () => { deltas++; });
const final = await stream.finalChatCompletion();
report.streamChunks = deltas;
report.streamFinish = final.choices[0].finish_reason;
report.streamCalls = final.choices[0].message.tool_calls?.map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments) }));

const seen = [];
const runner = client.chat.completions.runTools({
  model, seed: 3, temperature: 1, max_completion_tokens: 400, parallel_tool_calls: false,
  messages: [{ role: "user", content: "Pick one." }],
  tool_choice: { type: "function", function: { name: "pick" } },
  tools: [{
    type: "function",
    function: { ...tools[0].function, parse: JSON.parse, function: (args) => { seen.push(args); return `picked ${args.n}`; } },
  }],
});
await runner.done();
report.runToolsCalls = seen;
const msgs = runner.messages;
report.runToolsRoles = msgs.map((m) => m.role);

// The tool's result goes back as a role "tool" message.
const answer = await client.chat.completions.create({
  model, seed: 4, max_completion_tokens: 8, tools,
  messages: msgs,
});
report.afterToolFinish = answer.choices[0].finish_reason;
console.log(JSON.stringify(report));
