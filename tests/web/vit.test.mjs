// The Vision Transformer (models/vit-digits.safetensors, kind vit) through the JavaScript
// Classifier against PyTorch (tests/fixtures/vit_digits_test.json: the whole test split, its
// 8x8 inputs, predicted labels and probabilities), the digits preprocessing on the fixture PNGs
// (al_digit_from_file_bytes) and on RGBA pixels (al_digit_from_rgba) against the native CLI,
// the attention and its rollout, and bad input that gives clear errors after which the
// session keeps working.
// Run: node --test tests/web/vit.test.mjs  (after wasm/build.sh node; the CLI comparison
// also needs build/native/attnlite)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { loadAttnlite, nativeCli, root, wasmDir } from './common.mjs';

const vitPath = join(root, 'models', 'vit-digits.safetensors');
const fixture = JSON.parse(readFileSync(join(root, 'tests', 'fixtures', 'vit_digits_test.json'), 'utf8'));
const digitsDir = join(root, 'tests', 'fixtures', 'digits');
const pngs = readdirSync(digitsDir).filter((f) => f.endsWith('.png')).sort();

let al, Classifier, AttnliteError, vit, cls;

before(async () => {
  al = await loadAttnlite();
  ({ Classifier, AttnliteError } = await import(new URL(`file://${join(wasmDir, 'attnlite-api.mjs')}`).href));
  vit = al.loadModel(readFileSync(vitPath));
  cls = new Classifier(vit);
});

const flat = (image) => Float32Array.from(image.flat());

describe('the model', () => {
  test('is a vit with no translator', () => {
    assert.equal(vit.kind, 'vit');
    assert.equal(vit.numLayers, 3);
    assert.equal(vit.numHeads, 4);
    assert.throws(() => vit.translate('go .'), /Vision Transformer: it classifies images/);
    assert.throws(() => vit.newGenerator(), AttnliteError);
  });

  test('the classifier reads 1 x 8 x 8 images as 16 patches and a CLS token', () => {
    assert.equal(cls.imageSize, 8);
    assert.equal(cls.channels, 1);
    assert.equal(cls.numClasses, 10);
    assert.equal(cls.tokens, 17);
    assert.deepEqual(cls.labels, fixture.labels);
    assert.equal(cls.result(), null);  // nothing classified yet
    assert.throws(() => cls.attention(0),
      /^AttnliteError: attention: there is no classification to read \(none yet, or the last one failed\)$/);
  });
});

describe('the test split against PyTorch', () => {
  // The node build's default kernels (SIMD128 when built), then the scalar ones the web build uses.
  const backends = () => (al.backend === 'scalar' ? ['scalar'] : ['simd', 'scalar']);
  test(`the same label and probabilities (1e-5) for all ${fixture.count} images, every kernel set`, () => {
    const list = backends();
    for (const backend of list) {
      al.setBackend(backend);
      try {
        checkSplit();
      } finally {
        al.setBackend(list[0]);
      }
    }
  });

  function checkSplit() {
    let maxDiff = 0, correct = 0;
    for (let i = 0; i < fixture.count; ++i) {
      const r = cls.classify(flat(fixture.images[i]), { attention: false });
      assert.equal(r.label, fixture.predicted[i], `image ${i} (load_digits ${fixture.indices[i]})`);
      assert.equal(r.name, fixture.labels[r.label]);
      for (let k = 0; k < 10; ++k) maxDiff = Math.max(maxDiff, Math.abs(r.probs[k] - fixture.probs[i][k]));
      assert.ok(Math.abs(r.prob - fixture.probs[i][r.label]) <= 1e-5);
      if (r.label === fixture.targets[i]) ++correct;
    }
    assert.ok(maxDiff <= 1e-5, `${al.backend}: max |p - p_torch| = ${maxDiff}`);
    assert.equal(correct, fixture.correct);
  }

  test('attention (NH, T, T) rows and rollout rows sum to 1', () => {
    for (const i of [0, 21, 97, 358]) {
      const r = cls.classify(fixture.images[i].flat());  // a plain array works too
      assert.equal(r.layers, 3);
      assert.equal(r.heads, 4);
      assert.equal(r.label, fixture.predicted[i]);
      const T = cls.tokens;
      for (let l = 0; l < r.layers; ++l) {
        const a = cls.attention(l);
        assert.equal(a.length, r.heads * T * T);
        for (let row = 0; row < r.heads * T; ++row) {
          const s = a.subarray(row * T, row * T + T).reduce((x, y) => x + y, 0);
          assert.ok(Math.abs(s - 1) < 1e-4, `layer ${l} row ${row}: ${s}`);
        }
      }
      const ro = cls.rollout();
      assert.equal(ro.length, T * T);
      for (let q = 0; q < T; ++q) {
        const row = ro.subarray(q * T, q * T + T);
        assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-4, `rollout row ${q}`);
        assert.ok(row.every((v) => v >= 0));
      }
    }
  });

  test('without recorded attention: attention() is null and rollout() is an error', () => {
    cls.classify(flat(fixture.images[0]), { attention: false });
    assert.equal(cls.attention(0), null);
    assert.throws(() => cls.rollout(), AttnliteError);
    assert.throws(() => cls.attention(3), /layer must be an integer in \[0, 2\], got 3/);
  });
});

describe('lists of images: classifyBatch (al_classify_batch)', () => {
  const images = () => fixture.images.map(flat);

  // The whole split in chunks of 1, 7, 64 and 512 (one chunk): PyTorch's labels and
  // probabilities (1e-5, as one at a time), and one image's classification alone to float
  // rounding: a product of many rows may sum in another order than one of a single row, a
  // few float32 units in the last place of a probability at most 1 (1.2e-7 each).
  test(`the ${fixture.count} images, maxBatch 1, 7, 64 and 512: PyTorch's labels, classify()'s probabilities`, () => {
    const list = images();
    const single = list.map((x) => cls.classify(x, { attention: false }));
    for (const maxBatch of [1, 7, 64, 512]) {
      const c = new Classifier(vit, { maxBatch });
      try {
        assert.equal(c.maxBatch, maxBatch);
        const rs = c.classifyBatch(list);
        assert.equal(rs.length, fixture.count);
        let maxTorch = 0, maxSingle = 0;
        rs.forEach((r, i) => {
          assert.equal(r.label, fixture.predicted[i], `maxBatch ${maxBatch}: image ${i}`);
          assert.equal(r.name, fixture.labels[r.label]);
          assert.equal(r.probs.length, 10);
          assert.equal(r.attention, undefined);  // not asked for
          for (let k = 0; k < 10; ++k) {
            maxTorch = Math.max(maxTorch, Math.abs(r.probs[k] - fixture.probs[i][k]));
            maxSingle = Math.max(maxSingle, Math.abs(r.probs[k] - single[i].probs[k]));
          }
          assert.equal(r.prob, r.probs[r.label]);
        });
        assert.ok(maxTorch <= 1e-5, `maxBatch ${maxBatch}: max |p - p_torch| = ${maxTorch}`);
        assert.ok(maxSingle <= 1e-6, `maxBatch ${maxBatch}: max |p - p_alone| = ${maxSingle}`);
      } finally {
        c.free();
      }
    }
  });

  test("attention: true: each image's weights and rollout, as classify() records them alone", () => {
    const which = [0, 21, 97, 358], c = vit.newClassifier({ maxBatch: 3 });  // chunks of 3 and 1
    try {
      const rs = c.classifyBatch(which.map((i) => flat(fixture.images[i])), { attention: true });
      const T = cls.tokens;
      which.forEach((i, j) => {
        const r = rs[j], alone = cls.classify(flat(fixture.images[i]));
        assert.equal(r.label, alone.label);
        assert.equal(r.attention.length, 3);
        for (let l = 0; l < 3; ++l) {
          const a = cls.attention(l);
          assert.equal(r.attention[l].length, 4 * T * T);
          for (let k = 0; k < a.length; ++k) assert.ok(Math.abs(r.attention[l][k] - a[k]) <= 1e-6, `image ${i} layer ${l} [${k}]`);
        }
        const ro = cls.rollout();
        assert.equal(r.rollout.length, T * T);
        for (let k = 0; k < ro.length; ++k) assert.ok(Math.abs(r.rollout[k] - ro[k]) <= 1e-6, `image ${i} rollout [${k}]`);
      });
    } finally {
      c.free();
    }
  });

  test("maxBatch: the Classifier's option, else al.loadModel's; out of range is an error", () => {
    const n = al.loadModel(readFileSync(vitPath), { maxBatch: null, maxBeam: null });  // null: the defaults
    assert.equal(n.maxBatch, 1);
    n.free();
    const m = al.loadModel(readFileSync(vitPath), { maxBatch: 9 });
    try {
      assert.equal(m.maxBatch, 9);
      const c = m.newClassifier(), d = new Classifier(m, { maxBatch: 2 });
      assert.equal(c.maxBatch, 9);
      assert.equal(d.maxBatch, 2);
      c.free();
      d.free();
      for (const v of [0, 4097, 1.5, -1, NaN])
        assert.throws(() => new Classifier(m, { maxBatch: v }), { name: 'AttnliteError', message: `Classifier: maxBatch must be an integer in [1, 4096], got ${Number.isNaN(v) ? 'nan' : v}` });
      assert.throws(() => new Classifier(m, { maxBatch: '2' }), { message: 'Classifier: maxBatch must be an integer in [1, 4096], got a string' });
      assert.throws(() => al.loadModel(readFileSync(vitPath), { maxBatch: 0 }), { message: 'loadModel: maxBatch must be an integer in [1, 4096], got 0' });
      assert.throws(() => al.loadModel(readFileSync(vitPath), { maxBeam: 2 }), { message: "loadModel: maxBeam is a translator's limit; this is a Vision Transformer" });
    } finally {
      m.free();
    }
    assert.equal(vit.maxBatch, 1);
    assert.equal(cls.maxBatch, 1);
  });

  test('an empty list is an empty result; bad images are named by their index', () => {
    const c = vit.newClassifier({ maxBatch: 64 });
    try {
      assert.equal(c.classify(flat(fixture.images[4])).label, fixture.predicted[4]);
      assert.deepEqual(c.classifyBatch([]), []);  // nothing classified: classify()'s result stays
      assert.equal(c.result().label, fixture.predicted[4]);
      for (const v of [1, 'yes', {}])
        assert.throws(() => c.classifyBatch([], { attention: v }), (e) => e instanceof TypeError && /^classifyBatch: attention must be true or false, got /.test(e.message));
      const list = images().slice(0, 80);
      list[70] = list[70].slice();
      list[70][5] = NaN;  // in the second chunk: the library's "image 6" is the list's 70
      assert.throws(() => c.classifyBatch(list), { name: 'AttnliteError', message: 'classifyBatch: images[70]: pixel 5 is not a finite number' });
      list[70][5] = Infinity;
      list[3] = new Float32Array(63);
      assert.throws(() => c.classifyBatch(list), { message: 'classifyBatch: images[3]: 63 pixel values, the model reads 1 x 8 x 8 = 64' });
      list[3] = null;
      assert.throws(() => c.classifyBatch(list), { message: 'classifyBatch: images[3]: needs 64 pixel values (an array or Float32Array)' });
      for (const v of [null, undefined, 42, 'abc', new Float32Array(64)])
        assert.throws(() => c.classifyBatch(v), (e) => e instanceof TypeError && /^classifyBatch: images must be an array of images, got /.test(e.message));
      assert.throws(() => c.classifyBatch([], 3), { name: 'TypeError', message: 'classifyBatch: options must be an object, got a number' });
      // The classifier keeps working; one image's calls refuse after a batch, work after classify().
      const ok = c.classifyBatch(images().slice(0, 65));
      assert.deepEqual(ok.map((r) => r.label), fixture.predicted.slice(0, 65));
      for (const [call, fn] of [['result', () => c.result()], ['attention', () => c.attention(0)], ['rollout', () => c.rollout()]])
        assert.throws(fn, { message: `${call}: the last call was classifyBatch; its results hold each image's label, probabilities and (attention: true) weights` });
      assert.equal(c.classify(flat(fixture.images[2])).label, fixture.predicted[2]);
      assert.equal(c.result().label, fixture.predicted[2]);
      assert.equal(c.rollout().length, 17 * 17);
    } finally {
      c.free();
    }
  });

  test('the heap does not grow over repeated batches', () => {
    const c = vit.newClassifier({ maxBatch: 16 }), list = images().slice(0, 40);
    try {
      c.classifyBatch(list, { attention: true });
      const used = al.heapUsed(), size = al.heapSize;
      for (let i = 0; i < 10; ++i) {
        c.classifyBatch(list, { attention: i % 2 === 0 });
        assert.throws(() => c.classifyBatch([list[0], new Float32Array(3)]), AttnliteError);
      }
      assert.equal(al.heapUsed(), used);
      assert.equal(al.heapSize, size);
    } finally {
      c.free();
    }
  });
});

describe('digits preprocessing', () => {
  test('al_digit_from_file_bytes on the fixture PNGs: the 8x8 values (0.05) and the label', () => {
    assert.equal(pngs.length, 20);
    for (const f of pngs) {
      const label = Number(/_label(\d)_/.exec(f)[1]);
      const entry = fixture.png.find((p) => p.file_8x8 === `digits/${f}` || p.file_32x32 === `digits/${f}`);
      assert.ok(entry, f);
      const x = al.digitFromFileBytes(readFileSync(join(digitsDir, f)));
      assert.equal(x.length, 64);
      const want = fixture.images[entry.position].flat();
      for (let i = 0; i < 64; ++i) assert.ok(Math.abs(x[i] - want[i]) <= 0.05, `${f} [${i}]: ${x[i]} vs ${want[i]}`);
      assert.equal(cls.classify(x).label, label, f);
    }
  });

  test('the same values and labels as the native CLI', { skip: !existsSync(nativeCli) && 'no native CLI' }, () => {
    const files = pngs.map((f) => join(digitsDir, f));
    const p = spawnSync(nativeCli, ['classify', ...files], { encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const lines = p.stdout.trim().split('\n').map((l) => l.split('\t'));
    assert.equal(lines.length, files.length);
    lines.forEach(([path, label, prob], i) => {
      assert.equal(path, files[i]);
      const r = cls.classify(al.digitFromFileBytes(readFileSync(files[i])));
      assert.equal(r.name, label, files[i]);
      assert.ok(Math.abs(r.prob - Number(prob)) < 1e-4, `${files[i]}: ${r.prob} vs ${prob}`);
    });
  });

  test('al_digit_from_rgba gives what the file path gives for the same pixels', () => {
    // A 32x32 PNG's pixels as RGBA (each 8x8 value repeated 4x4), as the page's canvas holds them.
    for (const entry of fixture.png) {
      const v = fixture.images[entry.position].flat();
      const n = 64, rgba = new Uint8ClampedArray(n * n * 4);
      for (let y = 0; y < n; ++y) for (let x = 0; x < n; ++x) {
        const g = 255 - Math.floor((v[(y >> 3) * 8 + (x >> 3)] * 255 + 8) / 16), o = (y * n + x) * 4;
        rgba[o] = rgba[o + 1] = rgba[o + 2] = g;
        rgba[o + 3] = 255;
      }
      const a = al.digitFromRgba({ data: rgba, width: n, height: n });
      const b = al.digitFromFileBytes(readFileSync(join(digitsDir, entry.file_32x32.split('/')[1])));
      for (let i = 0; i < 64; ++i) {
        assert.ok(Math.abs(a[i] - v[i]) <= 0.05, `${entry.file_32x32} [${i}]`);
        assert.ok(Math.abs(a[i] - b[i]) <= 1e-4, `${entry.file_32x32} [${i}]: rgba ${a[i]} vs file ${b[i]}`);
      }
      assert.equal(cls.classify(a).label, entry.label);
    }
  });

  test('a blank canvas is 64 zeros; transparent pixels count as paper', () => {
    const blank = new Uint8ClampedArray(100 * 100 * 4);  // all transparent
    assert.ok(al.digitFromRgba(blank, 100, 100).every((v) => v === 0));
    blank.fill(255);
    assert.ok(al.digitFromRgba(blank, 100, 100).every((v) => v === 0));
  });
});

describe('bad input: clear errors, and the session keeps working', () => {
  const good = () => {
    const r = cls.classify(flat(fixture.images[0]));
    assert.equal(r.label, fixture.predicted[0]);
    assert.equal(cls.rollout().length, 17 * 17);
  };

  test('a truncated PNG and an empty file', () => {
    const png = readFileSync(join(digitsDir, pngs[0]));
    for (const bytes of [png.subarray(0, 40), png.subarray(0, png.length >> 1), new Uint8Array(0), new Uint8Array([1, 2, 3])]) {
      assert.throws(() => al.digitFromFileBytes(bytes), (e) => e instanceof AttnliteError && e.message.length > 5);
      good();
    }
    assert.throws(() => al.digitFromFileBytes(new Uint8Array(0)), /empty|image/i);
    assert.throws(() => al.digitFromFileBytes('not bytes'), /Uint8Array/);
  });

  // The WebAssembly module has no JPEG decoder (its size budget, docs/web.md): a JPEG file
  // is refused by name, with what to do instead, and the session keeps working.
  test('JPEG files: a clear error in the WebAssembly build', () => {
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0, 8, 0, 8, 1, 1, 0x11, 0, 0xff, 0xd9]);
    assert.throws(() => al.digitFromFileBytes(jpeg),
      (e) => e instanceof AttnliteError &&
        /JPEG images are not supported in this build; decode the image with the browser and use digitFromRgba/.test(e.message));
    good();
  });

  test('wrong RGBA sizes', () => {
    assert.throws(() => al.digitFromRgba(new Uint8ClampedArray(10), 2, 2), /10 bytes are not 2 x 2 RGBA pixels/);
    assert.throws(() => al.digitFromRgba(new Uint8ClampedArray(0), 0, 0), AttnliteError);
    assert.throws(() => al.digitFromRgba(null), /ImageData/);
    good();
  });

  test('wrong images for classify', () => {
    assert.throws(() => cls.classify(new Float32Array(63)), /63 pixel values, the model reads 1 x 8 x 8 = 64/);
    assert.throws(() => cls.classify(null), /64 pixel values/);
    const nan = flat(fixture.images[0]);
    nan[5] = NaN;
    assert.throws(() => cls.classify(nan), AttnliteError);
    assert.equal(cls.result(), null);  // a failure leaves no classification behind
    good();
  });

  test('a classifier on a translator is the library error; freed objects say so', () => {
    const tr = join(root, 'models', 'transformer-d2l.safetensors');
    if (existsSync(tr)) {
      const m = al.loadModel(readFileSync(tr));
      assert.throws(() => new Classifier(m), AttnliteError);
      m.free();
    }
    const m2 = al.loadModel(readFileSync(vitPath));
    const c2 = m2.newClassifier();
    m2.free();  // the classifier keeps its model alive
    assert.equal(c2.classify(flat(fixture.images[1])).label, fixture.predicted[1]);
    c2.free();
    assert.throws(() => c2.classify(flat(fixture.images[1])), /the classifier was freed/);
    good();
  });

  test('the heap does not grow over repeated classifications', () => {
    good();
    const before = al.heapUsed();
    for (let i = 0; i < 60; ++i) {
      cls.classify(flat(fixture.images[i % fixture.count]));
      cls.rollout();
      cls.attention(i % 3);
      al.digitFromRgba(new Uint8ClampedArray(64 * 64 * 4).fill(255), 64, 64);
    }
    assert.ok(al.heapUsed() - before < 4096, `${al.heapUsed() - before} bytes more`);
  });
});
