// make_cases.js writes cases.json (same layout as ../pipeline/cases.json): small
// tokenizer.json files aimed at the encoding paths that the pipeline cases and the
// shipped tokenizers leave alone (mutation testing, issue 27; mutants9b_test.go),
// and what the Hugging Face tokenizers library (npm tokenizers@0.23.2, the Rust
// implementation) makes of a fixed set of strings with each:
//   - kind 1 written with flags (no pipeline section): the legacy Prepend/Replace
//     normalizer, Metaspace "first" and "never", each with ignore_merges, with
//     vocabulary entries no merge reaches (so ignore_merges changes the ids) and
//     tokens that hold a character right before a ▁ ("o▁", "é▁": the word split of
//     spWords must not cut there);
//   - kind 1 with a pipeline section and ignore_merges (spPreToken);
//   - an added token that is also a vocabulary piece, and one whose content only
//     matches after spaces become ▁;
//   - kind 2 with a Split whose regex matches the empty string, for each behavior,
//     before ByteLevel(add_prefix_space): empty pieces must be dropped.
//
//   cd /tmp/hf && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/hf/node_modules node make_cases.js > cases.json
//
// The helpers (TRAIN, train, sentencePieceModel) are those of ../pipeline/make_cases.js.
'use strict';
const { Tokenizer } = require('tokenizers');

const TRAIN = `The quick brown fox jumps over the lazy dog. Hello world, hello World!
It's what they're saying: we'll see, I'd say, you've got 12345 and 3.14159 apples.
Über café naïve résumé — “quoted” text; ſtraße Kelvin K. İstanbul ﬁne.
	indented line
  two spaces    four spaces
numbers 2024-11-30 and 1,000,000; emoji 🙂 and 中文字符 かなカナ 한국어.`;

const TEXTS = [
  '', ' ', '  ', 'Hello world', ' Hello world ', 'hello  world', 'HELLO World',
  "It's they're we'll I'd you've IT'S THEY'RE", "'ſ 'ſt 'K 'k 'İ",
  'The quick brown fox.', 'numbers 12345 and 3.14159', '2024-11-30', 'a1b22c333d4444',
  'punctuation!!! ?? ... ,,', '“quoted” — dash', 'tab\tand\nnewline\r\nend', '\n\n\n', '   leading', 'trailing   ',
  'café naïve résumé', 'cafe\u0301 nai\u0308ve', 'ﬁne ﬀ ﬃ', 'ＦＵＬＬ width １２３', '½ ² ㎏ ℃', 'İstanbul ΣΑΣ ß',
  '🙂 emoji 👍🏽', '中文字符 かなカナ 한국어', 'x<|x|>y', 'a <|x|> b', 'a  <|x|>  b', '<|x|><|x|>', '<|X|>', 'word<mask>word',
  'a <mask> b', '<mask>', 'x <mask>, y', '▁ literal ▁▁', 'snake_case_word', 'e\u0903x mark', 'under_score__ and __init__',
  '\u00a0nbsp\u3000ideographic\u2028line', 'zero\u200dwidth\u200cjoin', 'A\u0130B', 'Σίσυφος', 'unknown ☃ snowman ⛄ chars', '☃ж☃', 'x☃жy⛄☃z',
];

// byteToUnicode is GPT-2's bytes_to_unicode.
const byteToUnicode = (() => {
  const m = [];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)) m[b] = String.fromCodePoint(b);
    else m[b] = String.fromCodePoint(256 + n++);
  }
  return m;
})();

// train runs nMerges BPE merges over the words (arrays of symbols).
function train(words, nMerges) {
  const merges = [];
  for (let k = 0; k < nMerges; k++) {
    const count = new Map();
    for (const w of words) for (let i = 0; i + 1 < w.length; i++) {
      const key = w[i] + '\u0000' + w[i + 1];
      count.set(key, (count.get(key) || 0) + 1);
    }
    let best = null, bestN = 1;
    for (const [key, n] of count) if (n > bestN) { best = key; bestN = n; }
    if (!best) break;
    const [a, b] = best.split('\u0000');
    merges.push([a, b]);
    for (const w of words) for (let i = 0; i + 1 < w.length; i++) {
      if (w[i] === a && w[i + 1] === b) { w.splice(i, 2, a + b); }
    }
  }
  return merges;
}

function byteLevelModel() {
  const vocab = {};
  byteToUnicode.forEach((c, b) => { vocab[c] = b; });
  const words = TRAIN.split(/(?= )|\n/).map(w => [...Buffer.from(w, 'utf8')].map(b => byteToUnicode[b]));
  const merges = train(words, 300);
  let id = 256;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  return { vocab, merges, next: id };
}

function sentencePieceModel(dropBytes, unk) {
  const vocab = {};
  let id = 0;
  if (unk) vocab['<unk>'] = id++;
  for (let b = 0; b < 256; b++) {
    if (!dropBytes.includes(b)) vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = id++;
  }
  const text = TRAIN.replace(/ /g, '▁');
  for (const c of new Set([...text])) if (!(c in vocab) && c !== '\n' && c !== '☃') vocab[c] = id++;
  const words = text.split(/(?=▁)|\n/).map(w => [...w]);
  const merges = train(words, 200);
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  return { vocab, merges, next: id };
}

const added = (id, content, o = {}) => Object.assign(
  { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }, o);
const metaspace = (scheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split });
const strip = { type: 'Strip', content: ' ', start: 1, stop: 0 };
const legacy = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };

// TEXTS2 are the strings aimed at the paths above, after the pipeline TEXTS.
const TEXTS2 = [
  'xyz', ' xyz', 'xyz xyz', 'the', ' the', 'The quick', 'Hello', 'hello world', 'so▁on', 'go on', 'to be', 'no one',
  'café éte', 'é é', 'résumé ▁x', '▁', '▁▁', '▁xyz', ' ▁', 'xyz<|x|>xyz', '<|x|>xyz', '<|x|> xyz', '<mask>▁xyz',
  'a ▁b', ',x', ' ,x', 'x,y z', '  lead, x', 'qq', 'foo', 'oo', 'o', 'boot', 'zoo ooh', 'xoxox', ' qq ', 'aqqb', 'qq qq', 'x qqy', 'o o o', 'oooo ▁▁ o▁o', 'word word word', 'lo lo', 'lolo',
];

function spTok(edit) {
  const sp = sentencePieceModel([], true);
  const v = sp.vocab;
  let id = sp.next;
  const add = s => { if (!(s in v)) v[s] = id++; };
  // Reached by no merge: only ignore_merges produces them.
  for (const s of ['▁xyz', 'xyz', '▁the', 'the', 'Hello', '▁hello▁world', 'lolo']) add(s);
  // An added token that is also a piece (Gemma's "▁▁"): ignore_merges finds it in the
  // model's vocabulary. (One outside it is not found there by the tokenizers library,
  // but .mlt does not record which added tokens the model's vocabulary holds.)
  add('▁▁');
  // Pieces that hold a character before ▁: merges that cross a word boundary.
  add('o▁'); add('é▁'); add('o▁o');
  sp.merges.push(['o', '▁'], ['é', '▁'], ['o▁', 'o']);
  const j = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(id, '<|x|>'), added(id + 1, '<mask>', { special: false }), added(v['▁▁'], '▁▁', { special: false }),
      added(id + 2, '▁qq', { special: false }), added(id + 3, 'qq', { special: false })],
    normalizer: legacy, pre_tokenizer: null, post_processor: null,
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' }, strip] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: v, merges: sp.merges },
  };
  edit(j);
  return j;
}

const bl = byteLevelModel();
const blSplit = (re, behavior = 'Isolated', invert = false) => ({ type: 'Split', pattern: { Regex: re }, behavior, invert });
const byteLevel = (aps = false, useRegex = false) => ({ type: 'ByteLevel', add_prefix_space: aps, trim_offsets: true, use_regex: useRegex });
const seq = (...p) => ({ type: 'Sequence', pretokenizers: p });

// A byte-level tokenizer whose Split regex also matches the empty string before a
// ByteLevel that puts a space before each piece: an empty piece the split let
// through would come out as a space.
function emptySplitTok(behavior, invert = false) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(bl.next, '<|x|>'), added(bl.next + 1, '<mask>', { special: false })],
    normalizer: null, pre_tokenizer: seq(blSplit('o*', behavior, invert), byteLevel(true, false)), post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: bl.vocab, merges: bl.merges },
  };
}

const variants = {
  sp_legacy: spTok(j => {}),
  sp_legacy_ignore: spTok(j => { j.model.ignore_merges = true; }),
  sp_first: spTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('first', false); }),
  sp_first_ignore: spTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('first', false); j.model.ignore_merges = true; }),
  sp_never_ignore: spTok(j => {
    j.normalizer = null; j.pre_tokenizer = metaspace('never', false); j.model.ignore_merges = true;
    j.decoder.decoders.pop();
  }),
  sp_pipeline_split_ignore: spTok(j => {
    j.normalizer = null; j.pre_tokenizer = metaspace('always', true); j.model.ignore_merges = true;
  }),
  sp_pipeline_split: spTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('always', true); }),
  sp_pipeline_whitespace_ignore: spTok(j => {
    j.normalizer = null; j.pre_tokenizer = { type: 'WhitespaceSplit' }; j.model.ignore_merges = true;
    j.decoder.decoders.pop();
  }),
  // Pieces split off before a Metaspace "first": only the one at offset 0 of the text gets ▁.
  sp_wsplit_first: spTok(j => { j.normalizer = null; j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace('first', false)] }; }),
  sp_punct_first_split: spTok(j => {
    j.normalizer = null;
    j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Punctuation', behavior: 'Isolated' }, metaspace('first', true)] };
  }),
  empty_split_isolated: emptySplitTok('Isolated'),
  empty_split_removed: emptySplitTok('Removed'),
  empty_split_removed_invert: emptySplitTok('Removed', true),
  empty_split_merged_previous: emptySplitTok('MergedWithPrevious'),
  empty_split_merged_next: emptySplitTok('MergedWithNext'),
  empty_split_contiguous: emptySplitTok('Contiguous'),
};

(async () => {
  const out = [];
  for (const [name, tok] of Object.entries(variants)) {
    const t = Tokenizer.fromString(JSON.stringify(tok));
    const cases = [];
    for (const text of TEXTS.concat(TEXTS2)) {
      const e0 = await t.encode(text, null, { addSpecialTokens: false });
      cases.push({ text, ids: e0.getIds(), decoded: await t.decode(e0.getIds(), false) });
    }
    out.push({ name, tokenizer: tok, cases });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})();
