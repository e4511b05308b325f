// The WASM module against PyTorch: tests/fixtures/translate_*.safetensors hold the book's
// predict_seq2seq outputs for 54 sentences (tools/make_translation_fixtures.py): tokens,
// steps and every attention weight, which must agree within 1e-5 + E of PyTorch's float64
// run (E: PyTorch's own float32 error, tests/test_translate.cpp explains). The int8 models
// (tools/make_int8_fixtures.py) run under both kernel tables: scalar, and the one with the
// native SIMD128 int8 kernel.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { loadAttnlite, readSafetensors, root } from './common.mjs';

const TOL = 1e-5;

const models = join(root, 'models'), fixtures = join(root, 'tests', 'fixtures');
const FIXTURES = [
  { kind: 'transformer', file: 'translate_transformer.safetensors', model: join(models, 'transformer-d2l.safetensors') },
  { kind: 'bahdanau', file: 'translate_bahdanau.safetensors', model: join(models, 'bahdanau-d2l.safetensors') },
  ...['scalar', 'simd'].flatMap((backend) => [
    { kind: 'transformer', file: 'translate_int8_transformer.safetensors', backend,
      model: join(fixtures, 'transformer-d2l-int8.safetensors') },
    { kind: 'bahdanau', file: 'translate_int8_bahdanau.safetensors', backend,
      model: join(fixtures, 'bahdanau-d2l-int8.safetensors') },
  ]),
];

let al;
before(async () => {
  al = await loadAttnlite();
});

for (const fx of FIXTURES) {
  const path = join(fixtures, fx.file);
  const present = existsSync(path) && existsSync(fx.model);
  const label = fx.backend ? `${fx.file} (${fx.backend} kernels)` : fx.file;
  test(`${label}: tokens and attention weights of PyTorch's predict_seq2seq`, { skip: !present && `${fx.file} is not here` }, () => {
    const { tensors: T, meta } = readSafetensors(path);
    const sentences = JSON.parse(meta.sentences);
    const modes = JSON.parse(meta.modes);
    // PyTorch's float64 run (the exact values): 1e-5 + PyTorch's own float32 error.
    const e = Number(meta.float32_error);
    assert.ok(e >= 0 && e < TOL, `float32_error ${meta.float32_error}`);
    const tol = TOL + e;
    if (fx.backend) {
      al.setBackend(fx.backend);
      if (fx.backend === 'simd') assert.match(al.backend, /simd/);
    }
    const m = al.loadModel(readFileSync(fx.model));
    let compared = 0;
    for (const mode of modes) {
      // Transformer: `pos` is attnlite's default, `d2l` the book's position 0 at every step.
      const d2lCompat = fx.kind === 'transformer' && mode === 'd2l';
      sentences.forEach((s, i) => {
        const key = `${mode}.s${i}`, label = `${mode} "${s}"`;
        const r = m.translate(s, { d2lCompat });
        assert.deepEqual(Array.from(r.tokenIds), T[`${key}.tokens`].data, `${label}: tokens`);
        assert.equal(r.steps, T[`${key}.steps`].data[0], `${label}: steps`);
        const check = (got, want, what) => {
          assert.ok(Math.abs(got - want) <= tol, `${label}: ${what}: ${got} vs PyTorch ${want}`);
          ++compared;
        };
        const S = r.S, steps = r.steps;
        if (fx.kind === 'transformer') {
          for (let l = 0; l < r.layers; ++l) {
            const enc = T[`${key}.enc_attn.${l}`], dec = T[`${key}.dec_self.${l}`], cr = T[`${key}.cross.${l}`];
            assert.deepEqual(enc.shape, [r.heads, S, S]);
            assert.deepEqual(dec.shape, [steps, r.heads, steps]);
            assert.deepEqual(cr.shape, [steps, r.heads, S]);
            for (let h = 0; h < r.heads; ++h) {
              const e = r.attention.encoderSelf[l][h], d = r.attention.decoderSelf[l][h], c = r.attention.cross[l][h];
              for (let j = 0; j < S * S; ++j) check(e[j], enc.data[h * S * S + j], `enc[${l}][${h}][${j}]`);
              for (let t = 0; t < steps; ++t) {
                for (let k = 0; k < steps; ++k)
                  check(d[t * steps + k], dec.data[(t * r.heads + h) * steps + k], `dec[${l}][${h}][${t}][${k}]`);
                for (let k = 0; k < S; ++k)
                  check(c[t * S + k], cr.data[(t * r.heads + h) * S + k], `cross[${l}][${h}][${t}][${k}]`);
              }
            }
          }
        } else {
          const a = T[`${key}.attn`];
          assert.deepEqual(a.shape, [steps, S]);
          const c = r.attention.cross[0][0];
          for (let j = 0; j < steps * S; ++j) check(c[j], a.data[j], `attn[${j}]`);
        }
      });
    }
    assert.ok(compared > 1000, `compared ${compared} weights`);
    m.free();
    if (fx.backend) al.setBackend('simd');
  });
}
