// A text cut into sentences through the JavaScript API (Attnlite.splitSentences and
// Model.sentences: the C API's al_split_sentences and al_model_sentences): the rules' cases,
// the sentences the native CLI cuts the same texts into (its --json "source" of each part),
// and refusals.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { loadAttnlite, nativeCli, root } from './common.mjs';

const CASES = [
  ["I'm home. I'm happy. Where is the station? Tom likes cats.",
    ["I'm home.", "I'm happy.", 'Where is the station?', 'Tom likes cats.']],
  ["i'm home. i'm happy", ["i'm home.", "i'm happy"]],
  ['go . i lost .', ['go .', 'i lost .']],
  ['"Is she young?" "Yes, she is."', ['"Is she young?"', '"Yes, she is."']],
  ['Mr. Smith met Dr. Jones. J. K. Rowling wrote it.', ['Mr. Smith met Dr. Jones.', 'J. K. Rowling wrote it.']],
  ['It costs 3.5 euros. Apples, etc. and pears.', ['It costs 3.5 euros.', 'Apples, etc. and pears.']],
  ['Wait... what? I waited\u2026 Nobody came.', ['Wait... what?', 'I waited\u2026', 'Nobody came.']],
  ['\u00c7a va.\u00a0\u00c0 demain ! \u{1F600}', ['\u00c7a va.', '\u00c0 demain !', '\u{1F600}']],
  ['   ', []],
  ['', []],
];

describe('Attnlite.splitSentences', () => {
  let al;
  before(async () => {
    al = await loadAttnlite();
  });

  test('the rules of include/attnlite/sentences.h', () => {
    for (const [text, want] of CASES) assert.deepEqual(al.splitSentences(text), want, text);
  });

  test('the sentences the native CLI translates one at a time', { skip: !existsSync(nativeCli) && `${nativeCli} is missing` }, () => {
    const texts = CASES.map(([t]) => t).filter((t) => t.trim() && !t.includes('\u{1F600}'));
    const p = spawnSync(nativeCli, ['translate', '--json', '--model', join(root, 'models', 'transformer-d2l.safetensors')],
      { input: texts.join('\n') + '\n', encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const parts = texts.map(() => []);
    for (const j of p.stdout.trim().split('\n').map((l) => JSON.parse(l))) parts[j.input - 1].push(j.source);
    assert.deepEqual(texts.map((t) => al.splitSentences(t)), parts);
  });

  test('a long text, and what is refused', () => {
    const long = Array(2000).fill('Go.').join(' ');  // 7,999 bytes: longer than a sentence may be
    assert.deepEqual(al.splitSentences(long), Array(2000).fill('Go.'));
    assert.throws(() => al.splitSentences(42), { name: 'TypeError', message: 'splitSentences: the text must be a string, got a number' });
    assert.throws(() => al.splitSentences('Go.\0 Run.'), { name: 'AttnliteError', message: 'splitSentences: the text contains a NUL character' });
    const used = al.heapUsed();
    for (let i = 0; i < 50; ++i) al.splitSentences(CASES[0][0]);
    assert.equal(al.heapUsed(), used);  // nothing left behind
  });
});

describe('Model.sentences', () => {
  let al, m;
  const bpePath = join(root, 'models', 'transformer-fra-bpe.safetensors');
  before(async () => {
    al = await loadAttnlite();
    m = al.loadModel(readFileSync(bpePath));
  });

  test('the sentences the native CLI translates one at a time, emoji alone left out', { skip: !existsSync(nativeCli) && `${nativeCli} is missing` }, () => {
    const texts = ["I'm home. Where is the station? \u{1F600}", ' Run! Now. ', '\u{1F600} \u{1F600}',
      ...CASES.map(([t]) => t).filter((t) => t.trim())];
    const p = spawnSync(nativeCli, ['translate', '--json', '--model', bpePath],
      { input: texts.join('\n') + '\n', encoding: 'utf8' });
    const parts = texts.map(() => []);
    for (const j of p.stdout.trim().split('\n').map((l) => JSON.parse(l))) parts[j.input - 1].push(j.source);
    // a text the CLI refuses (emoji alone: "empty sentence") has no --json line; sentences()
    // gives it whole, for translate() to refuse with that message
    assert.equal(p.status, 1);
    assert.match(p.stderr, /^attnlite translate: error: sentence 3: empty sentence/m);
    assert.deepEqual(parts[2], []);
    parts[2] = [texts[2]];
    assert.deepEqual(texts.map((t) => m.sentences(t)), parts);
    assert.deepEqual(m.sentences(texts[0]), ["I'm home.", 'Where is the station?']);
    assert.deepEqual(m.sentences(texts[1]), ['Run!', 'Now.']);
  });

  test('no sentence with a token: the whole text; what is refused', () => {
    assert.deepEqual(m.sentences(''), ['']);
    assert.deepEqual(m.sentences('  '), ['  ']);
    assert.deepEqual(m.sentences('\u{1F600} \u{1F600}'), ['\u{1F600} \u{1F600}']);
    assert.throws(() => m.translate(m.sentences('  ')[0]), { name: 'AttnliteError' });
    assert.throws(() => m.sentences(42), { name: 'TypeError', message: 'sentences: the text must be a string, got a number' });
    assert.throws(() => m.sentences('Go.\0 Run.'), { name: 'AttnliteError', message: 'sentences: the text contains a NUL character' });
    const used = al.heapUsed();
    for (let i = 0; i < 50; ++i) m.sentences(CASES[0][0]);
    assert.equal(al.heapUsed(), used);
    const gone = al.loadModel(readFileSync(bpePath));
    gone.free();
    assert.throws(() => gone.sentences('Go.'));
  });
});
