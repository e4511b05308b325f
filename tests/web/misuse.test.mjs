// The JavaScript API used wrongly: every method after free(), free() twice, a model freed
// while a session made from it lives on, arguments of the wrong type, inputs far over the
// limits, and models loaded and freed in a loop. Each gives a clear error (or, for the
// freed model, the same results) and none leaves memory behind: the bytes the allocator has
// handed out (al.heapUsed()) come back to their starting value exactly, and the WASM memory
// (al.heapSize) does not grow. Runs against the node build and, in tools/test.sh, the
// sanitized one (ATTNLITE_WASM_DIR=build/wasm-node-asan), where a use after free or an
// out-of-bounds access ends the process (the file fails); that build also runs
// LeakSanitizer at the end.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { loadApi, loadAttnlite, root, wasmDir } from './common.mjs';

const modelBytes = (name) => new Uint8Array(readFileSync(join(root, 'models', `${name}.safetensors`)));

let al, api, tBytes, lmBytes, vitBytes, digit;
before(async () => {
  al = await loadAttnlite();
  api = await loadApi();
  tBytes = modelBytes('transformer-d2l');
  lmBytes = modelBytes('lm-fra');
  vitBytes = modelBytes('vit-digits');
  digit = new Float32Array(64).map((_, i) => (i * 7) % 17);
});

// The heap in use before and after fn() (after one warm-up call, which may allocate what
// lives for the whole process), and the WASM memory size.
function assertNoGrowth(fn, what) {
  fn();
  const used = al.heapUsed(), size = al.heapSize;
  fn();
  assert.equal(al.heapUsed(), used, `${what}: bytes in use by malloc`);
  assert.equal(al.heapSize, size, `${what}: WASM memory size`);
}

// Every method and getter of cls's prototype (but the constructor, free() and the private
// _ ones), called on obj with the arguments in args (none when not listed).
function members(cls) {
  return Object.getOwnPropertyNames(cls.prototype)
    .filter((k) => k !== 'constructor' && k !== 'free' && !k.startsWith('_'))
    .map((k) => ({ name: k, getter: !!Object.getOwnPropertyDescriptor(cls.prototype, k).get }));
}
function call(obj, { name, getter }, args) {
  return getter ? obj[name] : obj[name](...(args[name] ?? []));
}

// An item the library refuses in a batch call is named by its place in the caller's list, with
// the reason from the library's message (all after its first ': ', colons included, or the
// whole message when it has none: no character of it dropped).
test('a refused item\'s error keeps the whole reason', async () => {
  const { refusedError } = await import(pathToFileURL(join(wasmDir, 'api', 'checks.mjs')).href);
  const e = (m) => refusedError('translateBatch', 'sentences', 3, m).message;
  assert.equal(e('sentence 1 of 8: empty sentence'), 'translateBatch: sentences[3]: empty sentence');
  assert.equal(e('sentence 0 of 2: a: b'), 'translateBatch: sentences[3]: a: b');
  assert.equal(e('empty sentence'), 'translateBatch: sentences[3]: empty sentence');
  assert.equal(refusedError('classifyBatch', 'images', 0, 'image 2: x').name, 'AttnliteError');
});

describe('after free()', () => {
  test('every Model method throws "the model was freed"; free() twice does nothing', () => {
    const m = al.loadModel(tBytes);
    m.translate('go .');
    const used = al.heapUsed();
    m.free();
    m.free();
    const args = { translate: ['go .'], metadata: ['attnlite.config'], tokenize: ['go .'] };
    const list = members(api.Model);
    assert.ok(list.length >= 5, list.map((x) => x.name).join(' '));
    for (const mem of list)
      assert.throws(() => call(m, mem, args), (e) => e instanceof api.AttnliteError && /^the model was freed$/.test(e.message),
        `model.${mem.name}`);
    assert.ok(al.heapUsed() < used, 'the model\'s memory was released');
  });

  test('every Generator method and getter throws "the generator was freed"', () => {
    const lm = al.loadModel(lmBytes), g = lm.newGenerator();
    g.generate('je', { maxTokens: 3 });
    g.free();
    g.free();
    lm.free();
    lm.free();
    const args = { start: ['je'], generate: ['je'], score: ['je suis .'], perplexity: [['je suis .']], attentionAt: [0, 0] };
    const list = members(api.Generator);
    assert.ok(list.length >= 20, list.map((x) => x.name).join(' '));
    for (const mem of list)
      assert.throws(() => call(g, mem, args), (e) => e instanceof api.AttnliteError && /^the generator was freed$/.test(e.message),
        `generator.${mem.name}`);
  });

  test('every Classifier method and getter throws "the classifier was freed"', () => {
    const vit = al.loadModel(vitBytes), c = vit.newClassifier();
    c.classify(digit);
    c.free();
    c.free();
    vit.free();
    const args = { classify: [digit], attention: [0] };
    const list = members(api.Classifier);
    assert.ok(list.length >= 5, list.map((x) => x.name).join(' '));
    for (const mem of list)
      assert.throws(() => call(c, mem, args), (e) => e instanceof api.AttnliteError && /^the classifier was freed$/.test(e.message),
        `classifier.${mem.name}`);
  });

  test('sessions cannot be made from a freed model', () => {
    for (const [bytes, make] of [[lmBytes, (m) => m.newGenerator()], [vitBytes, (m) => m.newClassifier()],
      [lmBytes, (m) => new api.Generator(m)], [vitBytes, (m) => new api.Classifier(m)]]) {
      const m = al.loadModel(bytes);
      m.free();
      assert.throws(() => make(m), { name: 'AttnliteError', message: 'the model was freed' });
    }
  });

  test('load, use and free leave nothing behind, in any order', () => {
    assertNoGrowth(() => {
      const lm = al.loadModel(lmBytes), g = lm.newGenerator();
      lm.free();  // before its generator
      g.generate('je', { maxTokens: 2 });
      g.free();
      g.free();
      const vit = al.loadModel(vitBytes), c = vit.newClassifier();
      c.classify(digit);
      c.free();  // before its model
      vit.free();
      vit.free();
    }, 'free in both orders');
  });
});

describe('a model freed while a session made from it lives', () => {
  test('Generator: the same generations after model.free()', () => {
    const lm = al.loadModel(lmBytes), ref = lm.newGenerator(), g = lm.newGenerator();
    const expect = ['je', 'nous allons'].map((p) => ref.generate(p, { maxTokens: 8 }).result());
    const sampled = ref.generate('il', { maxTokens: 6, temperature: 0.8, topK: 20, seed: 7 }).text;
    const score = ref.score('je suis là .');
    const stepped = ref.generate('je', { maxTokens: 4 }).text;
    ref.free();
    lm.free();
    ['je', 'nous allons'].forEach((p, i) => assert.deepEqual(g.generate(p, { maxTokens: 8 }).result(), expect[i]));
    assert.equal(g.generate('il', { maxTokens: 6, temperature: 0.8, topK: 20, seed: 7 }).text, sampled);
    assert.deepEqual(g.score('je suis là .'), score);
    g.start('je', { maxTokens: 4 });
    while (!g.done) g.step();
    assert.equal(g.text, stepped);
    g.free();
  });

  test('Classifier: the same classification and attention after model.free()', () => {
    const vit = al.loadModel(vitBytes), c = vit.newClassifier();
    const r = c.classify(digit), att = c.attention(0), roll = c.rollout();
    vit.free();
    assert.deepEqual(c.classify(digit), r);
    assert.deepEqual(c.attention(0), att);
    assert.deepEqual(c.rollout(), roll);
    c.free();
  });

  // The JavaScript Model owns its translator (model.free() frees both), so the C API's
  // refcount is checked through the module's exports: al_translator keeps the al_model alive.
  test('C translator: the same translation after al_model_free', () => {
    const m = al.mod, ref = al.loadModel(tBytes);
    const expect = ref.translate("i'm home .", { attention: false }).text;
    ref.free();
    const used = al.heapUsed();
    const p = m._malloc(tBytes.length);
    m.HEAPU8.set(tBytes, p);
    const mh = m._al_model_from_bytes(p, tBytes.length, 0);
    m._free(p);
    assert.ok(mh);
    const tr = m._al_translator_new(mh, 0, 0);
    assert.ok(tr);
    m._al_model_free(mh);
    for (let i = 0; i < 3; ++i) {
      const st = al._withStrings(["i'm home ."], (s) => m._al_translate(tr, s, 0));
      assert.equal(st, 0, m.UTF8ToString(m._al_translator_error(tr)));
      assert.equal(m.UTF8ToString(m._al_result_text(m._al_translator_result(tr, 0))), expect);
    }
    m._al_translator_free(tr);
    assert.equal(al.heapUsed(), used, 'model and translator both released');
  });

  test('there is no Worker in the JavaScript API', () => {
    // Translations run on the calling thread; nothing can free a model during one.
    assert.ok(!Object.keys(api).some((k) => /worker/i.test(k)), Object.keys(api).join(' '));
  });
});

describe('arguments of the wrong type', () => {
  const bad = [42, null, undefined, { text: 'go .' }, ['go .'], true, 12n];
  const label = (v) => (typeof v === 'bigint' ? `${v}n` : JSON.stringify(v) ?? String(v));
  let m, lm, g, vit, c;
  before(() => {
    m = al.loadModel(tBytes);
    lm = al.loadModel(lmBytes);
    g = lm.newGenerator();
    vit = al.loadModel(vitBytes);
    c = vit.newClassifier();
  });
  after(() => [m, g, lm, c, vit].forEach((x) => x.free()));

  for (const v of bad) {
    test(`${label(v)} where a string is expected: a TypeError`, () => {
      const calls = {
        'translate': [() => m.translate(v), /^translate: the sentence must be a string, got /],
        'al.tokenize': [() => al.tokenize(v), /^tokenize: the sentence must be a string, got /],
        'model.tokenize': [() => m.tokenize(v), /^tokenize: the sentence must be a string, got /],
        'metadata': [() => m.metadata(v), /^metadata: the key must be a string, got /],
        'start': [() => g.start(v), /^start: the prompt must be a string, got /],
        'generate': [() => g.generate(v), /^generate: the prompt must be a string, got /],
        'score': [() => g.score(v), /^score: the sentence must be a string, got /],
        'perplexity': [() => g.perplexity([v]), /^score: the sentence must be a string, got /],
      };
      assertNoGrowth(() => {
        for (const [what, [fn, re]] of Object.entries(calls))
          assert.throws(fn, (e) => e instanceof TypeError && re.test(e.message), what);
      }, label(v));
    });
  }

  test('the messages say what was given', () => {
    assert.throws(() => m.translate(null), { name: 'TypeError', message: 'translate: the sentence must be a string, got null' });
    assert.throws(() => m.translate(), { message: 'translate: the sentence must be a string, got undefined' });
    assert.throws(() => m.translate(3), { message: 'translate: the sentence must be a string, got a number' });
    assert.throws(() => m.translate({}), { message: 'translate: the sentence must be a string, got an object' });
    assert.throws(() => m.translate(['go .']), { message: 'translate: the sentence must be a string, got an array' });
  });

  test('a batch (list of sentences) that is not an array: a TypeError', () => {
    for (const v of ['je suis .', 42, null, undefined, { 0: 'je' }])
      assert.throws(() => g.perplexity(v), { name: 'TypeError', message: `perplexity: sentences must be an array of strings, got ${v === undefined ? 'undefined' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`}` });
  });

  test('lists for translateBatch and classifyBatch: not an array, or an entry of the wrong type', () => {
    assertNoGrowth(() => {
      for (const v of ['go .', 42, null, undefined, { 0: 'go .' }])
        assert.throws(() => m.translateBatch(v), { name: 'TypeError', message: `translateBatch: sentences must be an array of strings, got ${v === undefined ? 'undefined' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`}` });
      for (const v of bad.filter((x) => typeof x !== 'string'))
        assert.throws(() => m.translateBatch(['go .', v]), (e) => e instanceof TypeError && /^translateBatch: sentences\[1\] must be a string, got /.test(e.message), label(v));
      // eslint-disable-next-line no-sparse-arrays
      assert.throws(() => m.translateBatch(['go .', , 'hi .']), { name: 'TypeError', message: 'translateBatch: sentences[1] must be a string, got undefined' });
      // eslint-disable-next-line no-sparse-arrays
      assert.throws(() => c.classifyBatch([digit, , digit]), { name: 'AttnliteError', message: 'classifyBatch: images[1]: needs 64 pixel values (an array or Float32Array)' });
      assert.throws(() => c.classifyBatch([digit], { attention: 1 }), { name: 'TypeError', message: 'classifyBatch: attention must be true or false, got a number' });
      assert.throws(() => m.translateBatch(['go .'], 'beam'), { name: 'TypeError', message: 'translateBatch: options must be an object, got a string' });
      assert.throws(() => c.classifyBatch(digit), { name: 'TypeError', message: 'classifyBatch: images must be an array of images, got an object' });
      for (const v of [null, 42, {}, 'abcd'])
        assert.throws(() => c.classifyBatch([digit, v]), (e) => e instanceof api.AttnliteError && /^classifyBatch: images\[1\]: needs 64 pixel values/.test(e.message));
      assert.throws(() => g.translateBatch(['je']), TypeError);  // a Generator has no batches
      assert.throws(() => vit.translateBatch(['go .']), /Vision Transformer: it classifies images/);
      assert.throws(() => lm.translateBatch(['go .']), /language model: it continues French text/);
    }, 'lists');
  });

  test('options that are not an object: a TypeError', () => {
    for (const v of [null, 5, 'beam', [4]]) {
      assert.throws(() => m.translate('go .', v), (e) => e instanceof TypeError && /^translate: options must be an object, got /.test(e.message));
      assert.throws(() => g.generate('je', v), (e) => e instanceof TypeError && /^generate: options must be an object, got /.test(e.message));
      assert.throws(() => g.start('je', v), (e) => e instanceof TypeError && /^start: options must be an object, got /.test(e.message));
      assert.throws(() => c.classify(digit, v), (e) => e instanceof TypeError && /^classify: options must be an object, got /.test(e.message));
    }
  });

  test('images, model bytes and layers of the wrong type: an AttnliteError', () => {
    c.classify(digit);
    for (const v of [null, undefined, 42, {}, 'abcd'])
      assert.throws(() => c.classify(v), (e) => e instanceof api.AttnliteError && /^classify/.test(e.message));
    for (const v of [null, undefined, 42, {}, 'abcd', [1, 2, 3]])
      assert.throws(() => al.loadModel(v), { name: 'AttnliteError', message: 'loadModel needs a Uint8Array or ArrayBuffer' });
    for (const v of [null, 'x', -1, 99, 0.5])
      assert.throws(() => c.attention(v), (e) => e instanceof api.AttnliteError && /^attention: layer must be an integer in \[0, \d+\], got /.test(e.message));
  });

  test('the sessions still work afterwards', () => {
    assert.equal(m.translate("i'm home .").text, "je suis chez moi .");
    assert.ok(g.generate('je', { maxTokens: 3 }).numGenerated > 0);
    assert.equal(c.classify(digit).probs.length, 10);
  });
});

describe('inputs over the limits', () => {
  const huge = 'a '.repeat(5 << 20);  // 10 MiB
  let m, lm, g;
  before(() => {
    m = al.loadModel(tBytes);
    lm = al.loadModel(lmBytes);
    g = lm.newGenerator();
    m.translate('go .');
    g.generate('je', { maxTokens: 2 });
  });
  after(() => [m, g, lm].forEach((x) => x.free()));

  test('a 10 MiB string: "too long", and the WASM memory does not grow', () => {
    const size = al.heapSize, used = al.heapUsed(), n = huge.length;
    assert.throws(() => m.translate(huge), { name: 'AttnliteError', message: `sentence is too long: ${n} bytes (limit 4096)` });
    assert.throws(() => al.tokenize(huge), { message: `sentence is too long: ${n} bytes (limit 4096)` });
    assert.throws(() => g.generate(huge), { message: `prompt is too long: ${n} bytes (limit 4096)` });
    assert.throws(() => g.start(huge), { message: `prompt is too long: ${n} bytes (limit 4096)` });
    assert.throws(() => g.score(huge), { message: `sentence is too long: ${n} bytes (limit 4096)` });
    assert.equal(al.heapSize, size, 'WASM memory size');
    assert.equal(al.heapUsed(), used, 'bytes in use');
  });

  test('the limit counts UTF-8 bytes, the same in JavaScript and in the library', () => {
    // 4097 ASCII bytes: refused in JavaScript; 1366 x 'é€' (5 bytes each, 2732 chars) = 6830 bytes:
    // short enough in UTF-16 units to reach the library, which refuses it with the same words.
    assert.throws(() => m.translate('a'.repeat(4097)), { message: 'sentence is too long: 4097 bytes (limit 4096)' });
    assert.throws(() => m.translate('é€'.repeat(1366)), { message: 'sentence is too long: 6830 bytes (limit 4096)' });
    assert.throws(() => g.generate('é€'.repeat(1366)), { message: 'prompt is too long: 6830 bytes (limit 4096)' });
    assert.throws(() => m.translate('ééé'.repeat(683)), { message: 'sentence is too long: 4098 bytes (limit 4096)' });
    assert.ok(m.translate('a '.repeat(2048)).truncated, '4096 bytes: accepted, truncated to num_steps');
  });

  test('a 10 MiB string in a list: "too long" by its index, and the WASM memory does not grow', () => {
    const size = al.heapSize, used = al.heapUsed(), n = huge.length;
    assert.throws(() => m.translateBatch(['go .', huge]), { name: 'AttnliteError', message: `translateBatch: sentences[1]: sentence is too long: ${n} bytes (limit 4096)` });
    assert.throws(() => m.translateBatch(['go .', 'é€'.repeat(1366)]), { message: 'translateBatch: sentences[1]: sentence is too long: 6830 bytes (limit 4096)' });
    assert.equal(al.heapSize, size, 'WASM memory size');
    assert.equal(al.heapUsed(), used, 'bytes in use');
  });

  // 600 sentences of beams of 8 over 64 steps: each buffer of the book's Transformer fits a
  // quarter of the 32-bit address space, all of them together (1.2 GB) do not; refused when the
  // translator is measured, before its block is allocated (the WASM memory, which never
  // shrinks, used to grow to 1.2 GB first). A size that fits loads; the model's bytes come back.
  test('limits too large for one block: refused before the memory grows', () => {
    const size = al.heapSize, used = al.heapUsed();
    // Out of range: refused before the model's bytes are copied.
    for (const [o, message] of [[{ maxBeam: 99 }, 'loadModel: maxBeam must be an integer in [1, 8], got 99'],
      [{ maxBeam: '4' }, 'loadModel: maxBeam must be an integer in [1, 8], got a string'],
      [{ maxBeam: NaN }, 'loadModel: maxBeam must be an integer in [1, 8], got nan'],
      [{ maxBatch: 0 }, 'loadModel: maxBatch must be an integer in [1, 4096], got 0'],
      [{ maxBatch: 1e9 }, 'loadModel: maxBatch must be an integer in [1, 4096], got 1000000000']])
      assert.throws(() => al.loadModel(tBytes, o), { name: 'AttnliteError', message }, JSON.stringify(o));
    assert.equal(al.heapSize, size, 'WASM memory size after options out of range');
    assert.throws(() => al.loadModel(tBytes, { maxBatch: 600 }),
      (e) => e instanceof api.AttnliteError && /^the workspace these limits need \(\d+ bytes\) is more than one block can hold here \(1073741823 bytes\); lower the session's limits$/.test(e.message), 'maxBatch 600');
    assert.throws(() => al.loadModel(tBytes, { maxBatch: 4096 }), /the session limits are too large|more than one block can hold/);
    assert.equal(al.heapSize, size, 'WASM memory size');
    assert.equal(al.heapUsed(), used, 'bytes in use');
    const ok = al.loadModel(tBytes, { maxBatch: 4, maxBeam: 1 });
    assert.deepEqual(ok.translateBatch(['go .', "i'm home ."]).map((r) => r.text), ['va !', 'je suis chez moi .']);
    assert.throws(() => ok.translate('go .', { beam: 2 }), { message: 'beam size must be in [1, 1], got 2' });
    ok.free();
    assert.equal(al.heapUsed(), used, 'bytes in use after free');
  });

  test('a batch over max_batch (the C API; the page translates one sentence at a time)', () => {
    const mod = al.mod, ptrs = mod._malloc(8);
    assertNoGrowth(() => al._withStrings(['go .', 'i lost .'], (a, b) => {
      mod.HEAP32.set([a, b], ptrs >> 2);
      assert.equal(mod._al_translate_batch(m.tr, ptrs, 2, 0), 1 /* AL_ERR_ARGUMENT */);
      assert.equal(mod.UTF8ToString(mod._al_translator_error(m.tr)), 'batch of 2 sentences is outside [1, max_batch = 1]');
      assert.equal(mod._al_translate_batch(m.tr, ptrs, 0, 0), 1);
      assert.equal(mod._al_translate_batch(m.tr, ptrs, 1, 0), 0);
    }), 'batch');
    mod._free(ptrs);
  });
});

describe('memory over many loads and failures', () => {
  test('50 x (load the model, translate, free): the heap in use returns exactly', () => {
    const once = () => {
      const m = al.loadModel(tBytes);
      assert.equal(m.translate("i'm home .").text, 'je suis chez moi .');
      m.free();
    };
    once();
    const used = al.heapUsed(), size = al.heapSize;
    for (let i = 0; i < 50; ++i) once();
    assert.equal(al.heapUsed(), used, 'bytes in use by malloc');
    assert.equal(al.heapSize, size, 'WASM memory size');
  });

  test('100 failing calls of each kind leave nothing behind', () => {
    const m = al.loadModel(tBytes), lm = al.loadModel(lmBytes), g = lm.newGenerator();
    const vit = al.loadModel(vitBytes), c = vit.newClassifier();
    const longPrompt = 'je '.repeat(g.context + 5);
    const failing = [
      () => m.translate('go .', { beam: 99 }),
      () => m.translate('a'.repeat(5000)),
      () => m.translate('é€'.repeat(1366)),     // refused by the library
      () => g.generate(longPrompt),              // refused by the library: more words than the context
      () => g.generate('je', { temperature: -1 }),
      () => g.score(null),
      () => c.classify(new Float32Array(3)),
      () => al.loadModel(tBytes.subarray(0, 1000)),
      () => al.loadModel(new Uint8Array([1, 2, 3])),
      () => vit.newGenerator(),
      () => lm.translate('go .'),
    ];
    // Each fails with a message of the library or the API (never a trap: a RuntimeError).
    const run = () => {
      for (const f of failing) assert.throws(f, (e) => e.name === 'AttnliteError' || e.name === 'TypeError', String(f));
    };
    try {
      run();
      const used = al.heapUsed(), size = al.heapSize;
      for (let i = 0; i < 100; ++i) run();
      assert.equal(al.heapUsed(), used, 'bytes in use by malloc');
      assert.equal(al.heapSize, size, 'WASM memory size');
    } finally {
      [m, g, lm, c, vit].forEach((x) => x.free());
    }
  });
});

// The sanitized build only: LeakSanitizer over the whole module once every test has freed
// what it made (a leak prints its report and fails here).
after(() => {
  if (al?.mod._al_leak_check) assert.equal(al.mod._al_leak_check(), 0, 'LeakSanitizer found leaks (report above)');
  if (al?.figures?.mod._al_leak_check)
    assert.equal(al.figures.mod._al_leak_check(), 0, 'LeakSanitizer found leaks in the figure renderer (report above)');
});
