// make_cases.js writes cases.json: small tokenizer.json files, one per
// pipeline feature of the .mlt pipeline section, and what the Hugging Face
// tokenizers library (npm tokenizers@0.23.2, the Rust implementation) makes
// of a fixed set of strings with each. TestPipelineCases checks mlt against it.
//
//   cd /tmp/hf && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/hf/node_modules node make_cases.js > cases.json
//
// The vocabularies are trained here by a plain BPE loop over TRAIN (the most
// frequent pair first, ties by first occurrence), so that merges are real and
// every piece in them exists; the ids only need to be consistent.
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

const bl = byteLevelModel();
const added = (id, content, o = {}) => Object.assign(
  { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }, o);
const blSplit = (re, behavior = 'Isolated', invert = false) => ({ type: 'Split', pattern: { Regex: re }, behavior, invert });
const blLit = (s, behavior, invert = false) => ({ type: 'Split', pattern: { String: s }, behavior, invert });
const byteLevel = (aps = false, useRegex = false) => ({ type: 'ByteLevel', add_prefix_space: aps, trim_offsets: true, use_regex: useRegex });
const seq = (...p) => ({ type: 'Sequence', pretokenizers: p });
const llama3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function byteLevelTok(edit) {
  const j = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(bl.next, '<|x|>'), added(bl.next + 1, '<mask>', { special: false })],
    normalizer: null, pre_tokenizer: seq(blSplit(llama3), byteLevel()), post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: bl.vocab, merges: bl.merges },
  };
  edit(j);
  return j;
}

function sentencePieceTok(edit, dropBytes = [], unk = true) {
  const sp = sentencePieceModel(dropBytes, unk);
  const j = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(sp.next, '<|x|>'), added(sp.next + 1, '<mask>', { special: false })],
    normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '▁' }, pre_tokenizer: null, post_processor: null,
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: { type: 'BPE', dropout: null, unk_token: unk ? '<unk>' : null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: sp.vocab, merges: sp.merges },
  };
  edit(j);
  return j;
}

const metaspace = (scheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split });
const strip = { type: 'Strip', content: ' ', start: 1, stop: 0 };

const variants = {
  nfkc: byteLevelTok(j => { j.normalizer = { type: 'NFKC' }; }),
  nfd_lower_stripaccents: byteLevelTok(j => { j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }, { type: 'StripAccents' }] }; }),
  nfkd_strip: byteLevelTok(j => { j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'Strip', strip_left: true, strip_right: false }] }; }),
  replace_regex_prepend: byteLevelTok(j => { j.normalizer = { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Prepend', prepend: '>' }] }; }),
  word_regex: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\w+|[^\\w\\s]+|\\s+'), byteLevel()); }),
  case_insensitive: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit("(?i:'s|'k|the)|\\S+|\\s+"), byteLevel()); }),
  three_splits: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\p{N}{1,3}'), blSplit('[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+'), blSplit(llama3), byteLevel()); }),
  bytelevel_prefix_regex: byteLevelTok(j => { j.pre_tokenizer = byteLevel(true, true); }),
  bytelevel_prefix_after_split: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit(' ', 'Removed'), byteLevel(true, false)); }),
  removed_invert: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\p{L}+', 'Removed', true), byteLevel()); }),
  removed: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\s+', 'Removed'), byteLevel()); }),
  merged_previous: byteLevelTok(j => { j.pre_tokenizer = seq(blLit(' ', 'MergedWithPrevious'), byteLevel()); }),
  merged_next: byteLevelTok(j => { j.pre_tokenizer = seq(blLit(' ', 'MergedWithNext'), byteLevel()); }),
  merged_next_invert: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\p{L}+', 'MergedWithNext', true), byteLevel()); }),
  contiguous: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\p{P}', 'Contiguous'), byteLevel()); }),
  contiguous_invert: byteLevelTok(j => { j.pre_tokenizer = seq(blSplit('\\s', 'Contiguous', true), byteLevel()); }),
  digits: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'Digits', individual_digits: false }, byteLevel()); }),
  digits_individual: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'Digits', individual_digits: true }, byteLevel(false, true)); }),
  punctuation: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'Punctuation', behavior: 'Isolated' }, byteLevel()); }),
  punctuation_merged: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'Punctuation', behavior: 'MergedWithPrevious' }, byteLevel()); }),
  whitespace: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'Whitespace' }, byteLevel()); }),
  whitespace_split: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'WhitespaceSplit' }, byteLevel()); }),
  bert: byteLevelTok(j => { j.pre_tokenizer = seq({ type: 'BertPreTokenizer' }, byteLevel()); }),
  added_lstrip_rstrip: byteLevelTok(j => { j.added_tokens = [added(bl.next, '<|x|>', { lstrip: true }), added(bl.next + 1, '<mask>', { rstrip: true, special: false })]; }),
  added_single_word: byteLevelTok(j => { j.added_tokens = [added(bl.next, '<|x|>', { single_word: true }), added(bl.next + 1, '<mask>', { single_word: true, lstrip: true, rstrip: true })]; }),
  added_normalized_lower: byteLevelTok(j => {
    j.normalizer = { type: 'Lowercase' };
    j.added_tokens = [added(bl.next, '<|X|>', { normalized: true }), added(bl.next + 1, '<mask>', { special: false })];
  }),
  added_normalized_nfkc: byteLevelTok(j => {
    j.normalizer = { type: 'NFKC' };
    j.added_tokens = [added(bl.next, 'ﬁne', { normalized: true, special: false }), added(bl.next + 1, '<mask>', { normalized: true, special: false })];
  }),
  sp_metaspace_always: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('always', false); j.decoder.decoders.push(strip); }),
  sp_metaspace_always_split: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('always', true); j.decoder.decoders.push(strip); }),
  sp_metaspace_first_split: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('first', true); j.decoder.decoders.push(strip); }),
  sp_metaspace_never: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('never', false); }),
  sp_metaspace_decoder: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('first', false); j.decoder = metaspace('first', false); }),
  sp_metaspace_decoder_always: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('always', true); j.decoder = metaspace('always', true); }),
  sp_metaspace_decoder_never: sentencePieceTok(j => { j.normalizer = null; j.pre_tokenizer = metaspace('never', false); j.decoder = metaspace('never', false); }),
  sp_bytefallback_metaspace_decoder: sentencePieceTok(j => {
    j.normalizer = null; j.pre_tokenizer = metaspace('first', false);
    j.decoder = { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, metaspace('first', false)] };
  }),
  sp_missing_bytes_unk: sentencePieceTok(j => {}, [0x09, 0xE2, 0x98]),
  sp_missing_bytes_nofuse: sentencePieceTok(j => { j.model.fuse_unk = false; }, [0x09, 0xE2, 0x98]),
  sp_missing_bytes_no_unk: sentencePieceTok(j => {}, [0x09, 0xE2, 0x98], false),
  sp_lowercase_prepend: sentencePieceTok(j => {
    j.normalizer = { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };
    j.decoder.decoders.push(strip);
  }),
  sp_rstrip_phi3: sentencePieceTok(j => {
    j.normalizer = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };
    j.added_tokens = [added(j.added_tokens[0].id, '<|x|>', { rstrip: true }), added(j.added_tokens[1].id, '<mask>', { lstrip: true, special: false })];
    j.decoder.decoders.push(strip);
  }),
};

(async () => {
  const out = [];
  for (const [name, tok] of Object.entries(variants)) {
    const t = Tokenizer.fromString(JSON.stringify(tok));
    const cases = [];
    for (const text of TEXTS) {
      const e0 = await t.encode(text, null, { addSpecialTokens: false });
      cases.push({ text, ids: e0.getIds(), decoded: await t.decode(e0.getIds(), false) });
    }
    out.push({ name, tokenizer: tok, cases });
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})();
