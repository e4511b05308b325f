// The language model (models/lm-fra.safetensors, kind lm) through the JavaScript Generator
// against the native CLI (`attnlite generate --json --weights`): the same greedy text and
// token ids for "je" and "il est", the same sampled text for a fixed seed and options
// (SplitMix64 and the sampling rule of include/attnlite/generate.h on both sides), start +
// step equal to generate(), causal attention (rows sum to 1, nothing above the diagonal),
// perplexity against the native `attnlite eval --perplexity`, and bad options that are
// clear errors after which the session keeps working.
// Run: node --test tests/web/lm.test.mjs  (after wasm/build.sh node and the native CLI build)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadAttnlite, nativeCli, root } from './common.mjs';

const lmPath = join(root, 'models', 'lm-fra.safetensors');
const haveLm = existsSync(lmPath);

// The native CLI's JSON for one prompt (attention weights included).
function nativeGenerate(prompt, args = []) {
  if (!existsSync(nativeCli)) throw new Error(`${nativeCli} is missing: build the native CLI first`);
  const p = spawnSync(nativeCli, ['generate', '--json', '--weights', '--model', lmPath, ...args, prompt],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`native CLI failed (${p.status}): ${p.stderr}`);
  return JSON.parse(p.stdout);
}

// Pinned outputs of `attnlite generate` (native, x86-64 AVX2 kernels). The WASM module runs
// other kernels (SIMD128 int8 dot products); the same seed must still give the same text.
const GREEDY = { je: 'je ne suis pas en train de pleurer .', 'il est': 'il est venu à la maison .' };
const SAMPLED = [
  { prompt: 'nous allons', options: { seed: 7, temperature: 1.3 }, args: ['--seed', '7', '--temperature', '1.3'],
    text: 'nous allons te protéger non plus tard .' },
  { prompt: 'nous allons', options: { seed: 3, topK: 40, temperature: 0.8 }, args: ['--seed', '3', '--top-k', '40', '--temperature', '0.8'],
    text: 'nous allons à la bibliothèque .' },
  // a seed past 2^53: only a BigInt carries it
  { prompt: 'nous allons', options: { seed: 12345678901234567890n, topP: 0.95, temperature: 1.2 },
    args: ['--seed', '12345678901234567890', '--top-p', '0.95', '--temperature', '1.2'],
    text: 'nous allons peindre les formulaires <unk> .' },
  { prompt: 'il est', options: { seed: 5, temperature: 1.5, maxTokens: 6 }, args: ['--seed', '5', '--temperature', '1.5', '--max-tokens', '6'],
    text: 'il est fier d\'elle .' },
];

// int8 weights: native and WASM run different int8 kernels (see wasm.test.mjs), so
// probabilities and weights agree within 1e-4; tokens exactly.
const TOL = 1e-4;

function sameAsNative(g, n, label) {
  assert.equal(g.text, n.text, `${label}: text`);
  assert.equal(g.continuation, n.continuation, `${label}: continuation`);
  assert.deepEqual(Array.from(g.tokenIds), n.token_ids, `${label}: token ids`);
  assert.deepEqual(g.tokens, n.tokens, `${label}: tokens`);
  assert.equal(g.numPrompt, n.num_prompt);
  assert.equal(g.numGenerated, n.num_generated);
  assert.equal(g.numUnknown, n.num_unknown);
  assert.equal(g.eos, n.eos);
  assert.equal(g.done, true);
  n.probs.forEach((p, i) => assert.ok(Math.abs(g.probs[i] - p) <= TOL, `${label}: prob ${i}: ${g.probs[i]} vs ${p}`));
  const [L, NH, P] = n.attention_shape;
  assert.deepEqual([g.layers, g.heads, g.positions], [L, NH, P]);
  for (let l = 0; l < L; ++l) {
    for (let h = 0; h < NH; ++h) {
      const a = g.attentionAt(l, h);
      for (let q = 0; q < P; ++q)
        for (let k = 0; k < P; ++k)
          assert.ok(Math.abs(a[q * P + k] - n.attention[l][h][q][k]) <= TOL, `${label}: attention[${l}][${h}][${q}][${k}]`);
    }
  }
}

describe('language model (lm-fra)', { skip: !haveLm && 'models/lm-fra.safetensors is not here' }, () => {
  let al, m, g;
  before(async () => {
    al = await loadAttnlite();
    m = al.loadModel(readFileSync(lmPath));
    g = m.newGenerator();
  });
  after(() => {
    g?.free();
    m?.free();
  });

  test('model facts', () => {
    assert.equal(m.kind, 'lm');
    assert.equal(m.tgtVocabSize, 9308);
    assert.equal(m.numLayers, 3);
    assert.equal(m.numHeads, 4);
    assert.equal(m.isInt8, true);
    assert.equal(g.context, 32);
    assert.equal(g.vocab.length, 9308);
    assert.deepEqual(g.vocab.slice(0, 4), ['<unk>', '<pad>', '<bos>', '<eos>']);
    assert.ok(g.workspaceBytes > 0);
    assert.throws(() => m.translate('je'), { name: 'AttnliteError', message: /language model/ });
  });

  test('before any generation the getters are empty', () => {
    const fresh = m.newGenerator();
    try {
      assert.equal(fresh.text, '');
      assert.equal(fresh.numTokens, 0);
      assert.equal(fresh.tokenIds.length, 0);
      assert.equal(fresh.probs.length, 0);
      assert.equal(fresh.attention, null);
      assert.equal(fresh.done, false);
      assert.throws(() => fresh.step(), /no generation was started/);
    } finally {
      fresh.free();
    }
  });

  for (const [prompt, text] of Object.entries(GREEDY)) {
    test(`greedy "${prompt}" equals the native CLI: "${text}"`, () => {
      const n = nativeGenerate(prompt);
      assert.equal(n.text, text, 'the native CLI itself');
      g.generate(prompt);
      assert.equal(g.text, text);
      sameAsNative(g, n, prompt);
      assert.equal(g.options.sample, false);
    });
  }

  for (const { prompt, options, args, text } of SAMPLED) {
    test(`sampled "${prompt}" ${JSON.stringify(options, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))} equals the native CLI`, () => {
      const n = nativeGenerate(prompt, args);
      assert.equal(n.text, text, 'the native CLI itself');
      g.generate(prompt, options);
      assert.equal(g.options.sample, true, 'sampling is implied by the sampling options');
      sameAsNative(g, n, prompt);
      // the same seed gives the same text again; start + step the same
      assert.equal(g.generate(prompt, options).text, text);
      g.start(prompt, options);
      while (!g.done) g.step();
      assert.equal(g.text, text);
    });
  }

  test('seeds: a Number and the same BigInt agree; another seed differs', () => {
    const o = { temperature: 1.3 };
    const a = g.generate('nous allons', { ...o, seed: 7 }).text;
    assert.equal(g.generate('nous allons', { ...o, seed: 7n }).text, a);
    const texts = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((s) => g.generate('nous allons', { ...o, seed: s }).text));
    assert.ok(texts.size > 3, `different seeds give different texts (${[...texts].join(' | ')})`);
    assert.equal(g.generate('nous allons', { ...o, seed: 2n ** 64n - 1n }).options.seed, 2n ** 64n - 1n);
  });

  for (const [prompt, options] of [['je', {}], ['il est', {}], ['nous allons', { seed: 7, temperature: 1.3 }],
    ['elle', { seed: 11, topK: 20, topP: 0.9 }]]) {
    test(`step by step equals generate(): "${prompt}" ${JSON.stringify(options)}`, () => {
      const whole = g.generate(prompt, options).result();
      g.start(prompt, options);
      let steps = 0, last = g.numTokens;
      assert.equal(g.numGenerated, 1, 'start() chooses the first token');
      assert.equal(g.positions, g.numPrompt + 1, 'start() reads <bos> and the prompt');
      while (!g.done) {
        g.step();
        ++steps;
        assert.equal(g.numTokens, last + 1, 'one token per step');
        assert.equal(g.positions, g.numTokens - 1, 'the last token is read at the next step');
        last = g.numTokens;
      }
      const inc = g.result();
      assert.equal(steps, whole.numGenerated - 1);
      for (const k of ['text', 'continuation', 'tokens', 'numTokens', 'numPrompt', 'numGenerated', 'eos', 'done', 'positions'])
        assert.deepEqual(inc[k], whole[k], k);
      assert.deepEqual(inc.tokenIds, whole.tokenIds);
      assert.deepEqual(inc.probs, whole.probs);
      assert.deepEqual(inc.attention, whole.attention, 'the KV-cached steps record the same weights');
      // done: a further step changes nothing
      g.step();
      assert.equal(g.text, whole.text);
    });
  }

  test('causal attention: every row sums to 1, nothing above the diagonal', () => {
    g.generate('est-ce que tu', { seed: 4, temperature: 0.9, topK: 50 });
    const { layers: L, heads: NH, ld, positions: P } = g;
    assert.equal(ld, 32);
    assert.ok(P >= 5);
    const full = g.attention;
    assert.equal(full.length, L * NH * ld * ld);
    const view = g.attentionView();
    assert.deepEqual(view.slice(), full, 'the view shows the same numbers');
    for (let l = 0; l < L; ++l) {
      for (let h = 0; h < NH; ++h) {
        const a = g.attentionAt(l, h);
        assert.equal(a.length, P * P);
        for (let q = 0; q < P; ++q) {
          let sum = 0;
          for (let k = 0; k < P; ++k) {
            const w = a[q * P + k];
            if (k > q) assert.equal(w, 0, `[${l}][${h}][${q}][${k}] above the diagonal`);
            else assert.ok(w >= 0 && w <= 1);
            sum += w;
            assert.equal(full[((l * NH + h) * ld + q) * ld + k], w);
          }
          assert.ok(Math.abs(sum - 1) < 1e-5, `row ${q} of [${l}][${h}] sums to ${sum}`);
        }
      }
    }
    assert.throws(() => g.attentionAt(L, 0), /layer must be in \[0, 2\]/);
    // attention: false records none
    assert.equal(g.generate('je', { attention: false }).attention, null);
    assert.equal(g.text, GREEDY.je);
  });

  test('max tokens and the context limit', () => {
    g.generate('je', { maxTokens: 3 });
    assert.equal(g.numGenerated, 3);
    assert.equal(g.continuation, 'ne suis pas');
    assert.equal(g.eos, false);
    assert.equal(g.done, true);
    // 31 words fill the context: exactly one token is predicted
    const long = Array(31).fill('je').join(' ');
    g.generate(long);
    assert.equal(g.numPrompt, 31);
    assert.equal(g.numGenerated, 1);
    assert.equal(g.done, true);
  });

  test('unknown prompt words are counted and named', () => {
    g.generate('je zyzzyva tu');
    assert.equal(g.numUnknown, 1);
    assert.deepEqual(g.unknown, ['zyzzyva']);
    assert.equal(g.tokens[2], '<unk>');
    assert.deepEqual(g.generate('je').unknown, []);
  });

  test('perplexity: score() equals the native attnlite eval --perplexity', () => {
    const lines = ['je suis là .', 'il est venu à la maison .', 'nous allons à la bibliothèque .',
      'elle a un chat noir .', 'tom zyzzyva .'];
    const dir = mkdtempSync(join(tmpdir(), 'attnlite-lm-'));
    const file = join(dir, 'sentences.txt');
    writeFileSync(file, lines.join('\n') + '\n');
    let p;
    try {
      p = spawnSync(nativeCli, ['eval', '--perplexity', file, '--model', lmPath, '--json'], { encoding: 'utf8' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(p.status, 0, p.stderr);
    const n = JSON.parse(p.stdout);
    const r = g.perplexity(lines);
    assert.equal(r.tokens, n.tokens);
    assert.ok(Math.abs(r.nll - n.nll) <= 1e-3 * n.nll, `nll ${r.nll} vs native ${n.nll}`);
    assert.ok(Math.abs(r.perplexity - n.perplexity) <= 1e-3 * n.perplexity, `perplexity ${r.perplexity} vs native ${n.perplexity}`);
    const one = g.score('je suis là .');
    assert.equal(one.scored, true);
    assert.equal(one.tokens, 5);  // je suis là . <eos>
    assert.ok(one.perplexity > 1 && one.perplexity < 1000);
    // a likely sentence scores better than a shuffled one
    assert.ok(g.score('. là suis je').perplexity > one.perplexity);
    // too long for the context, or empty: skipped, not an error
    assert.deepEqual(g.score(Array(40).fill('je').join(' ')), { nll: 0, tokens: 0, scored: false, perplexity: NaN });
    assert.equal(g.score('').scored, false);
    // score() ends the generation
    assert.equal(g.numTokens, 0);
  });

  test('bad options and prompts are clear errors; the session keeps working', () => {
    const bad = [
      [() => g.generate('je', { sample: true, temperature: 0 }), 'temperature must be a number > 0, got 0'],
      [() => g.generate('je', { temperature: -1 }), 'temperature must be a number > 0, got -1'],
      [() => g.generate('je', { temperature: NaN }), 'temperature must be a number > 0, got nan'],
      [() => g.start('je', { topP: 1.5 }), 'top-p must be a number in (0, 1], got 1.5'],
      [() => g.start('je', { topP: 0 }), 'top-p must be a number in (0, 1], got 0'],
      [() => g.start('je', { topK: 2.5 }), 'top-k must be an integer >= 0 (0: no cut), got 2.5'],
      [() => g.start('je', { topK: -1 }), 'top-k must be an integer >= 0 (0: no cut), got -1'],
      [() => g.start('je', { maxTokens: -1 }), 'max tokens must be an integer >= 0 (0: until <eos> or the context is full), got -1'],
      [() => g.start('je', { seed: -1 }), 'seed must be an integer in [0, 2^64 - 1] (a Number up to 2^53 - 1 or a BigInt), got -1'],
      [() => g.start('je', { seed: 2 ** 53 }), /seed must be an integer in \[0, 2\^64 - 1\].*got 9007199254740992$/],
      [() => g.start('je', { seed: 2n ** 64n }), /got 18446744073709551616n$/],
      [() => g.start('je', { seed: 1.5 }), /seed must be an integer/],
      [() => g.generate(''), 'empty prompt'],
      [() => g.generate('   '), 'empty prompt'],
      [() => g.generate(Array(32).fill('je').join(' ')),
        'prompt of 32 words is longer than the limit: the model reads 32 positions, <bos> and at most 31 words'],
      [() => g.generate('x'.repeat(5000)), /prompt is too long: 5000 bytes \(limit 4096\)/],
    ];
    for (const [fn, message] of bad) {
      g.generate('il est');
      assert.throws(fn, (e) => {
        assert.equal(e.name, 'AttnliteError');
        if (typeof message === 'string') assert.equal(e.message, message);
        else assert.match(e.message, message);
        return true;
      });
      // the session keeps working
      assert.equal(g.generate('je').text, GREEDY.je);
    }
  });

  test('the heap does not grow over 150 generations', () => {
    for (let i = 0; i < 10; ++i) g.generate('nous allons', { seed: i, temperature: 1.2 });
    const size0 = al.heapSize, used0 = al.heapUsed();
    for (let i = 0; i < 150; ++i) {
      if (i % 3 === 0) g.generate('je', { maxTokens: 1 + (i % 7) });
      else if (i % 3 === 1) g.generate('nous allons', { seed: BigInt(i), temperature: 1.2, topK: 30 });
      else {
        g.start('il est', { seed: i, topP: 0.9 });
        while (!g.done) g.step();
        void g.attention;
      }
    }
    assert.equal(al.heapSize, size0, 'WASM memory (HEAP8.length)');
    assert.equal(al.heapUsed(), used0, 'bytes in use by malloc');
  });

  test('a generator outlives its model; a translator model cannot generate', () => {
    const m2 = al.loadModel(readFileSync(lmPath));
    const g2 = new (g.constructor)(m2);
    m2.free();
    assert.equal(g2.generate('je').text, GREEDY.je);
    assert.deepEqual(g2.generate('je zyzzyva').unknown, ['zyzzyva']);
    g2.free();
    assert.throws(() => g2.generate('je'), /freed/);
    const tr = al.loadModel(readFileSync(join(root, 'models', 'transformer-d2l.safetensors')));
    try {
      assert.throws(() => tr.newGenerator(), /this is a transformer model: it translates.*needs a language model/);
    } finally {
      tr.free();
    }
  });

  test('the committed web build generates the same texts', async () => {
    const web = await loadAttnlite(join(root, 'web'));
    const wm = web.loadModel(readFileSync(lmPath));
    const wg = wm.newGenerator();
    try {
      for (const [prompt, text] of Object.entries(GREEDY)) assert.equal(wg.generate(prompt).text, text);
      for (const s of SAMPLED) assert.equal(wg.generate(s.prompt, s.options).text, s.text);
    } finally {
      wg.free();
      wm.free();
    }
  });
});
