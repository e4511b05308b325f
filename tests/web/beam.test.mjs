// Beam search in the WASM module against PyTorch: tests/fixtures/beam_*.safetensors hold
// the n-best lists of tools/attnlite_tools/search.py for 20 sentences, beam sizes 2 and 4,
// alpha 0 and 0.75
// (tools/make_beam_fixtures.py documents the layout). Every hypothesis must have the same
// tokens, length and <eos>, its score and logp within 1e-4 relative; the best one's token
// probabilities and attention weights within 1e-5. Also: the greedy default is unchanged,
// bad beam sizes and alphas are clear errors, and repeated beam searches do not grow the heap.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { bookSentences, loadAttnlite, models, readSafetensors, root } from './common.mjs';

const REL = 1e-4;  // scores and logp, relative
const TOL = 1e-5;  // probabilities and attention weights, absolute

const FIXTURES = [
  { kind: 'transformer', file: 'beam_transformer.safetensors', model: 'transformer-d2l.safetensors' },
  { kind: 'bahdanau', file: 'beam_bahdanau.safetensors', model: 'bahdanau-d2l.safetensors' },
];

const relClose = (got, want) => Math.abs(got - want) <= REL * Math.abs(want);

let al;
before(async () => {
  al = await loadAttnlite();
});

for (const fx of FIXTURES) {
  const path = join(root, 'tests', 'fixtures', fx.file);
  const modelPath = join(root, 'models', fx.model);
  const present = existsSync(path) && existsSync(modelPath);
  test(`${fx.file}: n-best lists of tools/attnlite_tools/search.py`, { skip: !present && `${fx.file} or models/${fx.model} is not here` }, (t) => {
    const { tensors: T, meta } = readSafetensors(path);
    const sentences = JSON.parse(meta.sentences);
    const modes = JSON.parse(meta.modes), beams = JSON.parse(meta.beam_sizes);
    const alphas = JSON.parse(meta.alphas), tags = JSON.parse(meta.alpha_tags);
    assert.deepEqual(beams, [2, 4]);
    assert.equal(meta.model, `models/${fx.model}`);
    const m = al.loadModel(readFileSync(modelPath));
    assert.equal(m.maxBeam, 8);
    t.diagnostic(`${fx.model}: ${m.workspaceBytes} bytes of Translator buffers for beams up to ${m.maxBeam}, ` +
      `${m.weightBytes} bytes of weights`);
    let hyps = 0, weights = 0, worstRel = 0;
    for (const mode of modes) {
      // Transformer: `pos` is attnlite's default, `d2l` the book's position 0 at every step.
      const d2lCompat = fx.kind === 'transformer' && mode === 'd2l';
      for (const K of beams) {
        alphas.forEach((alpha, ai) => {
          sentences.forEach((s, i) => {
            const key = `${mode}.k${K}.a${tags[ai]}.s${i}.`, label = `${mode} K=${K} alpha=${alpha} "${s}"`;
            const r = m.translate(s, { d2lCompat, beam: K, alpha });
            assert.equal(r.beam, K);
            assert.equal(r.nbest.length, K, `${label}: n-best size`);
            const score = T[`${key}score`].data, logp = T[`${key}logp`].data;
            r.nbest.forEach((h, k) => {
              const what = `${label}: hypothesis ${k}`;
              assert.deepEqual(Array.from(h.tokenIds), T[`${key}tokens.${k}`].data, `${what}: tokens`);
              assert.equal(h.text, h.tokens.join(' '), `${what}: text`);
              assert.equal(h.length, T[`${key}length`].data[k], `${what}: length`);
              assert.equal(h.eos, T[`${key}eos`].data[k] === 1, `${what}: eos`);
              assert.ok(relClose(h.score, score[k]), `${what}: score ${h.score} vs PyTorch ${score[k]}`);
              assert.ok(relClose(h.logp, logp[k]), `${what}: logp ${h.logp} vs PyTorch ${logp[k]}`);
              if (k > 0) assert.ok(h.score <= r.nbest[k - 1].score, `${what}: sorted by score`);
              worstRel = Math.max(worstRel, Math.abs(h.score - score[k]) / Math.abs(score[k]));
              ++hyps;
            });
            // The result itself is the best hypothesis, with its probabilities and attention.
            const best = r.nbest[0];
            assert.equal(r.text, best.text, `${label}: result text`);
            assert.deepEqual(Array.from(r.tokenIds), Array.from(best.tokenIds), `${label}: result tokens`);
            assert.equal(r.steps, best.length, `${label}: steps`);
            assert.equal(r.eos, best.eos, `${label}: result eos`);
            const probs = T[`${key}probs`].data;
            assert.equal(r.scores.length, probs.length);
            const check = (got, want, what) => {
              assert.ok(Math.abs(got - want) <= TOL, `${label}: ${what}: ${got} vs PyTorch ${want}`);
              ++weights;
            };
            probs.forEach((p, j) => check(r.scores[j], p, `probability ${j}`));
            const S = r.S, steps = r.steps;
            if (fx.kind === 'transformer') {
              for (let l = 0; l < r.layers; ++l) {
                const dec = T[`${key}dec_self.${l}`], cr = T[`${key}cross.${l}`];
                assert.deepEqual(dec.shape, [steps, r.heads, steps]);
                assert.deepEqual(cr.shape, [steps, r.heads, S]);
                for (let h = 0; h < r.heads; ++h) {
                  const d = r.attention.decoderSelf[l][h], c = r.attention.cross[l][h];
                  for (let q = 0; q < steps; ++q) {
                    for (let k = 0; k < steps; ++k)
                      check(d[q * steps + k], dec.data[(q * r.heads + h) * steps + k], `dec[${l}][${h}][${q}][${k}]`);
                    for (let k = 0; k < S; ++k)
                      check(c[q * S + k], cr.data[(q * r.heads + h) * S + k], `cross[${l}][${h}][${q}][${k}]`);
                  }
                }
              }
            } else {
              const a = T[`${key}attn`];
              assert.deepEqual(a.shape, [steps, S]);
              const c = r.attention.cross[0][0];
              for (let j = 0; j < steps * S; ++j) check(c[j], a.data[j], `attn[${j}]`);
            }
          });
        });
      }
    }
    t.diagnostic(`${hyps} hypotheses and ${weights} probabilities and weights compared; ` +
      `largest relative score difference ${worstRel.toExponential(2)}`);
    assert.equal(hyps, modes.length * sentences.length * 2 * (2 + 4));
    m.free();
  });
}

describe('beam options of Model.translate', { skip: models.length === 0 && 'no shipped model here' }, () => {
  let m;
  before(() => {
    m = al.loadModel(readFileSync(models[0].path));
  });

  test('no beam option is greedy decoding, with a one-entry n-best list', () => {
    for (const s of bookSentences) {
      const g = m.translate(s), b1 = m.translate(s, { beam: 1, alpha: 0.75 });
      assert.equal(g.beam, 1);
      assert.equal(g.alpha, 0);
      assert.equal(g.nbest.length, 1);
      const [h] = g.nbest;
      assert.equal(h.text, g.text);
      assert.deepEqual(h.tokens, g.tokens);
      assert.deepEqual(Array.from(h.tokenIds), Array.from(g.tokenIds));
      assert.equal(h.length, g.steps);
      assert.equal(h.eos, g.eos);
      const logp = Array.from(g.scores).reduce((a, p) => a + Math.log(p), 0);
      assert.ok(h.logp < 0 && Math.abs(h.logp - logp) < 1e-3 * g.steps, `${s}: logp ${h.logp} vs ${logp}`);
      assert.equal(h.score, h.logp);  // alpha 0
      // Beam 1 is greedy whatever alpha: the same tokens, the score divided by length^alpha.
      assert.equal(b1.text, g.text);
      assert.ok(Math.abs(b1.nbest[0].score - h.logp / h.length ** 0.75) < 1e-6 * Math.abs(h.logp));
    }
  });

  test("beam 4 on i'm home .: four hypotheses, best first, and the attention of the best", () => {
    const r = m.translate("i'm home .", { beam: 4 });
    assert.equal(r.nbest.length, 4);
    for (let k = 1; k < 4; ++k) assert.ok(r.nbest[k].score <= r.nbest[k - 1].score);
    assert.equal(new Set(r.nbest.map((h) => h.tokens.join(' ') + h.eos)).size, 4, 'distinct hypotheses');
    assert.equal(r.text, r.nbest[0].text);
    assert.equal(r.attention.cross[0][0].length, r.steps * r.S);
    // Without attention the n-best list is the same.
    const q = m.translate("i'm home .", { beam: 4, attention: false });
    assert.equal(q.attention, null);
    assert.deepEqual(q.nbest, r.nbest);
  });

  test('bad beam sizes and alphas are AttnliteErrors that say what is allowed', () => {
    const bad = (options, re) => assert.throws(() => m.translate("i'm home .", options),
      (e) => e.name === 'AttnliteError' && re.test(e.message), JSON.stringify(options));
    for (const beam of [0, -1, 9, 100])
      bad({ beam }, new RegExp(`^beam size must be in \\[1, 8\\], got ${beam}$`));
    for (const beam of [2.5, NaN, '4'])
      bad({ beam }, /^beam size must be an integer in \[1, 8\], got /);
    for (const [alpha, shown] of [[-0.1, '-0.1'], [2.5, '2.5'], [NaN, 'nan'], [Infinity, 'inf'], [-Infinity, '-inf']])
      bad({ beam: 2, alpha }, new RegExp(`^length penalty alpha must be a number in \\[0, 2\\], got ${shown}$`));
    bad({ beam: 2, alpha: '0.5' }, /^length penalty alpha must be a number in \[0, 2\], got 0\.5$/);
    // A failed call leaves no n-best list behind, and the next call works.
    const r = m.translate("i'm home .", { beam: 2, alpha: 2 });
    assert.equal(r.nbest.length, 2);
  });

  test('the heap does not grow over repeated beam searches', () => {
    const run = () => {
      for (let i = 0; i < 50; ++i) m.translate(bookSentences[i % 4], { beam: 1 + (i % 8), alpha: (i % 5) * 0.25 });
    };
    run();
    const used = al.heapUsed(), size = al.heapSize;
    run();
    run();
    assert.equal(al.heapUsed(), used);
    assert.equal(al.heapSize, size);
  });
});
