// A sub-word translator through the JavaScript API: tests/fixtures/bpe_tiny.safetensors (random
// weights, a byte-pair merge table of 300 merges; tools/make_bpe_fixtures.py) and its int8
// copy. model.subword; Model.tokenize() gives its pieces of the cased text, as
// `attnlite tokenize --model tests/fixtures/bpe_tiny.safetensors` does (the pieces are written
// out below, from tests/fixtures/bpe_tiny.json); the translation of each of the fixture's
// sentences has PyTorch's token ids and detokenized text (the "f32" and "int8" entries of that
// file); the result's source tokens and words are the pieces, and unknownChars names the
// characters never seen in training (no word is unknown to it). The book's word models are unchanged: their tokenize()
// is the book's words.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadAttnlite, models, nativeCli, root } from './common.mjs';

const fixtures = join(root, 'tests', 'fixtures');
const MODEL = join(fixtures, 'bpe_tiny.safetensors'), MODEL_INT8 = join(fixtures, 'bpe_tiny-int8.safetensors');
const expected = JSON.parse(readFileSync(join(fixtures, 'bpe_tiny.json'), 'utf8')).sentences;

// The pieces of each sentence of tests/fixtures/bpe_tiny.json (tools/attnlite_tools/bpe.py's
// segmentation of the sentence normalized as a translator reads it: docs/input.md;
// `attnlite tokenize --model` gives the same).
const PIECES = {
  'Where is the station?': ['Wh', 'ere_', 'is_', 'the_', 'st', 'at', 'i', 'on_', '?_'],
  "I'm home.": ["I'm_", 'h', 'om', 'e_', '._'],
  "My brother's going to kill me.": ['M', 'y_', 'b', 'ro', 'th', 'er', "'s_", 'go', 'ing_', 'to_', 'k', 'il', 'l_', 'me_', '._'],
  "Tom bought a Zyxquorp yesterday, didn't he?": ['Tom_', 'bo', 'u', 'ght_', 'a_', 'Z', 'y', 'x', 'qu', 'or', 'p_', 'y',
    'es', 't', 'er', 'd', 'ay_', ',_', 'di', 'd', "n't_", 'he_', '?_'],
  'She said:\u00a0«no»!': ['She_', 's', 'ai', 'd', ':', '_', '"', 'no', '"', '_', '!_'],  // normalized first
  'Look at 漢字 now.': ['L', 'oo', 'k_', 'at_', '<unk>', '<unk>', '_', 'now_', '._'],
  'Wait... what?!': ['W', 'ait_', '._', '._', '._', 'w', 'hat_', '?_', '!_'],
  'I\u2019m \u201chome\u201d \u2014 wait\u2026': ["I'm_", '"', 'h', 'om', 'e', '"', '_', '-', '_', 'wa', 'it_', '._', '._', '._'],
};

describe('a sub-word translator (tests/fixtures/bpe_tiny.safetensors)', () => {
  let al, m;
  before(async () => {
    al = await loadAttnlite();
    m = al.loadModel(readFileSync(MODEL));
  });
  after(() => m?.free());

  test('the fixture holds the pieces written out here', () => {
    assert.deepEqual(expected.map((e) => e.source), Object.keys(PIECES));
    for (const e of expected) assert.deepEqual(e.pieces, PIECES[e.source], e.source);
  });

  test('model.subword; the model reads num_steps pieces', () => {
    assert.equal(m.subword, true);
    assert.equal(m.kind, 'transformer');
    assert.equal(m.numSteps, 12);
    assert.equal(m.srcVocabSize, 406);
  });

  test('tokenize(): the pieces of the cased text', () => {
    for (const [sentence, pieces] of Object.entries(PIECES)) assert.deepEqual(m.tokenize(sentence), pieces, sentence);
    assert.deepEqual(m.tokenize(''), []);
    assert.deepEqual(m.tokenize('  \t '), []);
    // The case is kept: "where" and "Where" are other pieces.
    assert.deepEqual(m.tokenize('where'), ['w', 'here_']);
    // ...but a sentence in capitals reads lowercased (docs/input.md), as the native side does.
    assert.deepEqual(m.tokenize('WHERE IS THE STATION?'), m.tokenize('where is the station?'));
    assert.deepEqual(m.tokenize('WHERE'), ['w', 'here_']);
    // Emoji are not read.
    assert.deepEqual(m.tokenize('\u{1F3E0} where \u2764\uFE0F\u{1F44B}\u{1F3FD}'), ['w', 'here_']);
    assert.deepEqual(m.tokenize('WHERE is'), ['W', 'H', 'E', 'R', 'E', '_', 'is_'], 'one of a-z keeps the case');
    // So does a sentence in Title Case, of three words or more.
    assert.deepEqual(m.tokenize('Where Is The Station?'), m.tokenize('where is the station?'));
    assert.notDeepEqual(m.tokenize('Where Is'), m.tokenize('where is'), 'two words keep their case');
    // The book's word tokenizer, with no model, is as it was.
    assert.deepEqual(al.tokenize('Where is the station?'), ['where', 'is', 'the', 'station', '?']);
  });

  test('tokenize() gives what `attnlite tokenize --model` gives', { skip: !existsSync(nativeCli) && `${nativeCli} is missing` }, () => {
    for (const sentence of Object.keys(PIECES)) {
      const p = spawnSync(nativeCli, ['tokenize', '--model', MODEL, sentence], { encoding: 'utf8' });
      assert.equal(p.status, 0, p.stderr);
      assert.deepEqual(p.stdout.trim().split(' '), m.tokenize(sentence), sentence);
    }
  });

  test('tokenize(): its errors', () => {
    assert.throws(() => m.tokenize(null), { name: 'TypeError', message: 'tokenize: the sentence must be a string, got null' });
    assert.throws(() => m.tokenize('x'.repeat(5000)), { name: 'AttnliteError', message: 'sentence is too long: 5000 bytes (limit 4096)' });
    assert.deepEqual(m.tokenize("I'm home."), PIECES["I'm home."], 'the next call works');
    // The longest inputs, of characters never seen: a '<unk>' piece each.
    assert.deepEqual(m.tokenize('\x01 '.repeat(2048)), Array(2048).fill(['<unk>', '_']).flat());
    assert.deepEqual(m.tokenize('漢'.repeat(1365)), [...Array(1365).fill('<unk>'), '_']);
  });

  for (const [file, key] of [[MODEL, 'f32'], [MODEL_INT8, 'int8']]) {
    test(`translate(): PyTorch's ids and detokenized text (${key})`, () => {
      const model = key === 'f32' ? m : al.loadModel(readFileSync(file));
      try {
        assert.equal(model.isInt8, key === 'int8');
        for (const e of expected) {
          const r = model.translate(e.source);
          assert.deepEqual(Array.from(r.tokenIds), e[key].ids, `${e.source}: ids`);
          assert.deepEqual(r.tokens, e[key].pieces, `${e.source}: pieces`);
          assert.equal(r.text, e[key].text, `${e.source}: text`);
          assert.equal(r.nbest[0].text, r.text);
        }
      } finally {
        if (model !== m) model.free();
      }
    });
  }

  test('the result: source pieces, truncation and the characters read as <unk>', () => {
    const r = m.translate('Where is the station?');
    const pieces = PIECES['Where is the station?'];
    assert.equal(r.subword, true);
    assert.deepEqual(r.srcWords, pieces);
    assert.deepEqual(r.srcTokens.slice(0, r.srcValid), [...pieces, '<eos>']);
    assert.deepEqual(r.srcTokens.slice(r.srcValid), ['<pad>', '<pad>']);
    assert.deepEqual([r.srcLen, r.srcValid, r.truncated, r.numUnknown], [10, 10, false, 0]);
    assert.deepEqual([r.unknown, r.unknownChars], [[], []]);
    assert.equal(r.attention.cross[0][0].length, r.steps * r.S);
    // More pieces than the model reads: the first 12, no <eos>; the words are all of them.
    const long = "Tom bought a Zyxquorp yesterday, didn't he?";
    const t = m.translate(long);
    assert.deepEqual(t.srcWords, PIECES[long]);
    assert.deepEqual(t.srcTokens, PIECES[long].slice(0, 12));
    assert.deepEqual([t.srcLen, t.srcValid, t.truncated, t.numUnknown], [24, 12, true, 0]);
    // Only characters never seen become <unk>: 漢 and 字, named once each; no word is
    // unknown (not the made-up one), as in the CLI's JSON.
    assert.deepEqual([t.unknown, t.unknownChars], [[], []]);
    const u = m.translate('Look at 漢字 now. 字!');
    assert.equal(u.numUnknown, 3);
    assert.deepEqual(u.unknownChars, ['漢', '字']);
    assert.deepEqual(u.unknown, []);
    // Beam search: every hypothesis detokenized, the best one the result's text.
    const b = m.translate("I'm home.", { beam: 4 });
    assert.equal(b.nbest.length, 4);
    assert.equal(b.nbest[0].text, b.text);
    for (const h of b.nbest) assert.ok(!h.text.includes('_'), `${h.text}: detokenized`);
  });
});

describe('the book\'s word models are unchanged', { skip: !models.some((x) => x.name === 'transformer-d2l') && 'models/transformer-d2l.safetensors is not here' }, () => {
  test('tokenize() is the book\'s words; subword is false', async () => {
    const al = await loadAttnlite();
    const m = al.loadModel(readFileSync(join(root, 'models', 'transformer-d2l.safetensors')));
    try {
      assert.equal(m.subword, false);
      assert.deepEqual(m.tokenize("He's  calm!"), ["he's", 'calm', '!']);
      assert.deepEqual(m.tokenize('Where is the station?'), al.tokenize('Where is the station?'));
      const r = m.translate("I'm home.");
      assert.equal(r.subword, false);
      assert.equal(r.text, 'je suis chez moi .');
      assert.deepEqual(r.srcWords, ["i'm", 'home', '.']);
      const z = m.translate('zyzzyva 漢 .');
      assert.deepEqual([z.unknown, z.unknownChars], [['zyzzyva', '漢'], []]);
    } finally {
      m.free();
    }
  });
});
