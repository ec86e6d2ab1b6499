// make_cases.js writes cases.json: what the Hugging Face tokenizers library
// (npm tokenizers@0.23.2, the Rust implementation) makes of a few texts and
// text pairs, with and without add_special_tokens, for real tokenizer.json
// files of ../shared/tokenizers whose post_processor is replaced by the ones
// below (Qwen3-Embedding's, and variants that exercise every template item).
// TestPostProcessorCases checks mlt's Encode and EncodePair against it.
//
//   cd /tmp/hf && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/hf/node_modules node make_cases.js /work/shared/tokenizers > cases.json
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

const root = process.argv[2];
const seq = (id, type_id = 0) => ({ Sequence: { id, type_id } });
const sp = (id, type_id = 0) => ({ SpecialToken: { id, type_id } });
const st = (id, ids) => ({ [id]: { id, ids, tokens: ids.map(() => id) } });
const bl = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
const eot = '<|endoftext|>';

// Qwen3-Embedding's post-processor: EOS after the text (and after each of a pair).
const qwen3Emb = {
  type: 'TemplateProcessing', single: [seq('A'), sp(eot)], pair: [seq('A'), sp(eot), seq('B', 1), sp(eot, 1)],
  special_tokens: st(eot, [151643]),
};
const CONFIGS = [
  { name: 'qwen3-embedding', tok: 'qwen3', post: qwen3Emb },
  { name: 'qwen3-embedding-sequence', tok: 'qwen3', post: { type: 'Sequence', processors: [bl, qwen3Emb] } },
  {
    name: 'qwen3-wrap-multi', tok: 'qwen3', post: {
      type: 'TemplateProcessing',
      single: [sp('<s>'), seq('A'), sp('</s>')],
      pair: [sp('<s>'), seq('A'), sp('</s>'), sp('</s>', 1), seq('B', 1), sp('</s>', 1)],
      special_tokens: { ...st('<s>', [151644, 151645]), ...st('</s>', [151643]) },
    },
  },
  {
    name: 'qwen3-pair-b-first', tok: 'qwen3', post: {
      type: 'TemplateProcessing', single: [seq('A')], pair: [seq('B', 1), sp(eot), seq('A')],
      special_tokens: st(eot, [151643]),
    },
  },
  { name: 'llama2', tok: 'llama2', post: null }, // its own: <s> $A, <s> $A <s> $B (flag 1)
  { name: 'gemma3', tok: 'gemma3', post: null },
  {
    name: 'llama2-pair-one-bos', tok: 'llama2', post: {
      type: 'TemplateProcessing', single: [sp('<s>'), seq('A')], pair: [sp('<s>'), seq('A'), seq('B', 1)],
      special_tokens: st('<s>', [1]),
    },
  },
];
const TEXTS = ['', 'Hello world', ' leading space', 'What is the capital of China?', 'a<|endoftext|>b'];
const PAIRS = [['Hello', 'world'], ['', 'x'], ['The capital of China is Beijing.', 'What is the capital of China?']];

(async () => {
  const out = [];
  for (const c of CONFIGS) {
    const j = JSON.parse(fs.readFileSync(path.join(root, c.tok, 'tokenizer.json'), 'utf8'));
    if (c.post) j.post_processor = c.post;
    const t = Tokenizer.fromString(JSON.stringify(j));
    const cases = [];
    for (const text of TEXTS) {
      cases.push({
        text, special: (await t.encode(text, null, { addSpecialTokens: true })).getIds(),
        plain: (await t.encode(text, null, { addSpecialTokens: false })).getIds(),
      });
    }
    for (const [a, b] of PAIRS) {
      cases.push({
        text: a, pair: b, special: (await t.encode(a, b, { addSpecialTokens: true })).getIds(),
        plain: (await t.encode(a, b, { addSpecialTokens: false })).getIds(),
      });
    }
    out.push({ name: c.name, tokenizer: c.tok, post_processor: c.post, cases });
  }
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
})();
