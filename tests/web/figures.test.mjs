// The figure the page downloads (Attnlite.renderTranslationMap over the attention of a
// translation made in WebAssembly) against the native CLI's `attnlite heatmap translate` PNG of
// the same sentence: the same size and layout, the same title, tokens and layer labels, and
// the same pixels except where the two builds' float rounding tips a weight into the
// neighbouring colour step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { figureDiff, loadAttnlite, models, nativeCli } from './common.mjs';

const al = await loadAttnlite();
const dir = mkdtempSync(join(tmpdir(), 'attnlite-figures-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

// The matrices and labels of one map, gathered from a translation result as the page does
// (web/translation-view.js): the source up to its <eos>, the decoder's outputs and inputs.
function gather(r, kind, layers, heads) {
  const S = r.S, T = r.steps, nSrc = r.srcValid;
  const src = r.srcTokens.slice(0, nSrc);
  const outputs = [...r.tokens, ...(r.eos ? ['<eos>'] : [])].slice(0, T);
  const inputs = ['<bos>', ...r.tokens].slice(0, T);
  const [q, k, ld, full, yticks, xticks] = {
    enc: [nSrc, nSrc, S, r.attention.encoderSelf, src, src],
    dec: [T, T, T, r.attention.decoderSelf, outputs, inputs],
    cross: [T, nSrc, S, r.attention.cross, outputs, src],
  }[kind];
  const mats = new Float32Array(layers.length * heads.length * q * k);
  let o = 0;
  for (const l of layers)
    for (const h of heads)
      for (let i = 0; i < q; ++i) for (let j = 0; j < k; ++j) mats[o++] = full[l][h][i * ld + j];
  return { mats, q, k, xticks, yticks };
}

function cliPng(args) {
  const out = join(dir, `cli-${Math.random().toString(36).slice(2)}.png`);
  const p = spawnSync(nativeCli, ['heatmap', 'translate', ...args, '--out', out], { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  return PNG.sync.read(readFileSync(out));
}

const cases = [
  // model, sentence, kind, layer, head (0-based; null: all), beam, alpha
  ['transformer-d2l', "i'm home .", 'cross', 0, 0, 1, 0],
  ['transformer-d2l', "i'm home .", 'enc', null, null, 1, 0],
  ['transformer-d2l', 'he\'s calm .', 'dec', 1, null, 1, 0],
  ['bahdanau-d2l', "i'm home .", 'cross', 0, 0, 1, 0],
  ['transformer-fra', "i can't find my keys .", 'cross', null, null, 1, 0],
  ['transformer-fra', 'she reads a book every week .', 'dec', 2, 3, 4, 0.7],
];

for (const [name, sentence, kind, layer, head, beam, alpha] of cases) {
  const m = models.find((x) => x.name === name);
  const what = `${name} ${kind} L${layer ?? 'all'} H${head ?? 'all'} beam ${beam}: "${sentence}"`;
  test(`the page's download equals the CLI's PNG: ${what}`, { skip: !m }, () => {
    const model = al.loadModel(readFileSync(m.path));
    try {
      const r = model.translate(sentence, { beam, alpha });
      const tr = model.kind === 'transformer';
      const layers = layer === null ? [...Array(model.layers).keys()] : [layer];
      const heads = head === null ? [...Array(model.heads).keys()] : [head];
      const f = gather(r, kind, tr ? layers : [0], tr ? heads : [0]);
      const img = al.renderTranslationMap(f.mats, {
        kind, layers: tr ? layers : [0], heads: tr ? heads : [0], queries: f.q, keys: f.k, transformer: tr,
        model: name, sentence, translation: r.text, xticks: f.xticks, yticks: f.yticks,
      });
      const args = ['--model', m.path, sentence, '--kind', { enc: 'enc', dec: 'dec-self', cross: 'cross' }[kind]];
      if (tr && layer !== null) args.push('--layer', String(layer + 1));
      if (tr && head !== null) args.push('--head', String(head + 1));
      if (beam > 1) args.push('--beam', String(beam), '--alpha', String(alpha));
      const png = cliPng(args);
      assert.deepEqual([img.width, img.height], [png.width, png.height], 'the same figure size');
      assert.equal(img.layout.rows * img.layout.cols, layers.length * heads.length > 1 && tr ? layers.length * heads.length : 1);
      // Every pixel outside the cells is identical (title, tick labels, layer and head names,
      // colorbar); a cell may differ by a colour step where the weights differ in rounding.
      const { outside, inside, maxInside: maxStep } = figureDiff(img, png, img.layout.panels);
      assert.equal(outside, 0, `${outside} pixels outside the cells differ`);
      assert.ok(maxStep <= 3, `a cell differs by ${maxStep} levels (more than one colour step)`);
      assert.ok(inside <= 0.02 * png.width * png.height, `${inside} cell pixels differ`);
    } finally {
      model.free();
    }
  });
}

test('renderTranslationMap refuses what it cannot draw', () => {
  const o = { kind: 'cross', layers: [0], heads: [0], queries: 2, keys: 3, model: 'm', sentence: 'a b', translation: 'c' };
  const six = new Float32Array(6).fill(0.5);
  assert.equal(al.renderTranslationMap(six, o).width > 0, true);
  assert.throws(() => al.renderTranslationMap(six, { ...o, kind: 'self' }), /kind must be enc, dec or cross/);
  assert.throws(() => al.renderTranslationMap(new Float32Array(5), o), /5 values for 1x1x2x3/);
  assert.throws(() => al.renderTranslationMap(six, { ...o, xticks: ['a', 'b'], yticks: ['c', 'd'] }),
    /one token per key and one per query/);
  assert.throws(() => al.renderTranslationMap(six, { ...o, layers: [-1] }), /layer -1 out of range/);
  assert.throws(() => al.renderTranslationMap(new Float32Array(12), { ...o, heads: [0, 1], transformer: false }),
    /a Bahdanau model has one map/);
  assert.throws(() => al.renderTranslationMap(six, { ...o, cmap: 'Jet' }), /colormap/);
});
