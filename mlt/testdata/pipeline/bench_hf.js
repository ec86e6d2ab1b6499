// bench_hf.js measures Hugging Face tokenizers (npm tokenizers@0.23.2) on the
// long documents of each conformance folder (the texts of 10 KB or more of its
// cases.jsonl, concatenated, as BenchmarkEncode in bench_test.go does), one
// encode call at a time (one thread), in MB/s of wall and of process CPU time.
//
//   NODE_PATH=/tmp/hf/node_modules nice node bench_hf.js ../../../../shared
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

(async () => {
  const shared = process.argv[2];
  for (const set of ['tokenizers', 'tokenizers-next']) {
    for (const name of fs.readdirSync(path.join(shared, set)).sort()) {
      const dir = path.join(shared, set, name);
      if (!fs.existsSync(path.join(dir, 'cases.jsonl'))) continue;
      const doc = fs.readFileSync(path.join(dir, 'cases.jsonl'), 'utf8').split('\n').filter(Boolean)
        .map(l => JSON.parse(l).text).filter(t => Buffer.byteLength(t) >= 10000).join('');
      const bytes = Buffer.byteLength(doc);
      const tok = Tokenizer.fromFile(path.join(dir, 'tokenizer.json'));
      await tok.encode(doc, null, { addSpecialTokens: false }); // warm the cache
      let n = 0;
      const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
      while (Number(process.hrtime.bigint() - t0) < 2e9) {
        await tok.encode(doc, null, { addSpecialTokens: false });
        n++;
      }
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(c0);
      const cpu = (c.user + c.system) / 1e6;
      console.log(`${name}\t${(n * bytes / wall / 1e6).toFixed(2)} MB/s\t${(n * bytes / cpu / 1e6).toFixed(2)} cpu-MB/s\t(${bytes} bytes x ${n})`);
    }
  }
})();
