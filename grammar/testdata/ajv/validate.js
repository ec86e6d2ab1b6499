// Reads [{schema, output}] (output: the raw text) from the file in argv[2]
// and prints a JSON array: per case null when ajv (JSON Schema 2020-12, full
// formats) accepts JSON.parse(output), else ajv's error text.
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;
const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const out = cases.map(({ schema, output }) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  let v;
  try { v = JSON.parse(output); } catch (e) { return "JSON.parse: " + e.message; }
  const ok = ajv.validate(schema, v);
  return ok ? null : ajv.errorsText(ajv.errors);
});
process.stdout.write(JSON.stringify(out));
