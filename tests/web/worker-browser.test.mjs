// The page's translation worker in headless Chromium (playwright-core): the main thread keeps
// running while a beam-8 translation runs; a new sentence, or another model, while a
// translation runs cancels it (the worker is replaced, the cancelled result never shows);
// the worker's heap comes back to where it was over loads and translations; a
// TranslatorClient freed while it translates rejects with a clear error, as does every later
// call. Translations are compared with the native CLI (build/native/attnlite).
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; skipped without one unless
// ATTNLITE_REQUIRE_BROWSER=1.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { nativeTranslate, root } from './common.mjs';
import { FLAGS, chromiumPath, haveBrowser } from './browser-common.mjs';
import { serve } from './serve.mjs';


const model = (name) => join(root, 'models', `${name}.safetensors`);
// The page's default translator (web/app.js DEFAULT_MODEL), which the page opens with: the
// sub-word model, which reads the English as written.
const DEFAULT = 'transformer-fra-bpe';
// Long enough that a beam of 8 takes many decoding steps over a long source: as written for
// the default, as the book's word models read it for them; one sentence (the page would cut a
// text of several into them).
const LONG_CASED = "I'm home, he's calm, I lost, we are at home, they are calm and she is happy.";
const LONG = "i'm home , he's calm , i lost , we are at home , they are calm and she is happy .";

describe('the translation worker in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, server, url, page, errors;

  before(async () => {
    ({ server, url } = await serve(join(root, 'web')));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
    page = await browser.newPage();
    errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  // Submits the sentences one after another in the same task (each a new request), counts
  // the main thread's timer ticks until the page shows a new translation, and returns
  // { ticks, shown (translations shown meanwhile), text, restarts (workers replaced) }.
  function submit(sentences, { beam = '8', model: switchTo = null } = {}) {
    return page.evaluate(async ({ sentences, beam, switchTo }) => {
      const $ = (id) => document.getElementById(id);
      const n = Number(document.body.dataset.translations);
      const restarts = window.attnlitePage.translator().restarts;
      $('beam').value = beam;
      let ticks = 0, stop = false;
      const tick = () => {
        if (stop) return;
        ticks += 1;
        setTimeout(tick, 0);
      };
      setTimeout(tick, 0);
      for (const s of sentences) {
        $('sentence').value = s;
        $('translate-form').requestSubmit();
      }
      if (switchTo) {
        $('model').value = switchTo;
        $('model').dispatchEvent(new Event('change'));
      }
      await new Promise((resolve) => {
        const done = () => Number(document.body.dataset.translations) > n || document.body.dataset.state === 'error';
        if (done()) return resolve();
        const obs = new MutationObserver(() => done() && (obs.disconnect(), resolve()));
        obs.observe(document.body, { attributes: true });
      });
      stop = true;
      // Any result of a cancelled request would arrive after the last one: give it time.
      await new Promise((r) => setTimeout(r, 300));
      return {
        ticks, shown: Number(document.body.dataset.translations) - n, text: $('output-text').textContent,
        restarts: window.attnlitePage.translator().restarts - restarts, state: document.body.dataset.state,
        error: $('error').hidden ? '' : $('error').textContent, info: $('model-info').textContent,
      };
    }, { sentences, beam, switchTo });
  }

  test('the main thread keeps running during a beam-8 translation', async () => {
    const [want] = nativeTranslate(model(DEFAULT), [LONG_CASED], ['--beam', '8']);
    const r = await submit([LONG_CASED]);
    assert.match(r.info, new RegExp(`^${DEFAULT}: Transformer`));
    assert.equal(r.text, want.translation);
    assert.equal(r.text, 'Je suis chez moi, et moi sommes heureuses.');
    assert.equal(r.shown, 1);
    assert.equal(r.state, 'ready');
    // A translation on the main thread would finish inside the submit, before any timer.
    assert.ok(r.ticks >= 1, `timer ticks while translating: ${r.ticks}`);
    assert.equal(r.restarts, 0);
    assert.deepEqual(errors, []);
  });

  test('a new sentence cancels the running beam search', async () => {
    const [want] = nativeTranslate(model(DEFAULT), ["He's calm."], ['--beam', '8']);
    const r = await submit([LONG_CASED, "He's calm."]);
    assert.equal(r.text, want.translation);
    assert.equal(r.text, 'Il est calme.');
    assert.equal(r.shown, 1, 'only the newer translation is shown');
    assert.equal(r.restarts, 1, 'the worker running the first one was replaced');
    assert.equal(r.error, '');
    // The fresh worker has the model: the next translation needs no restart.
    const again = await submit(["I'm home."], { beam: '1' });
    assert.equal(again.text, nativeTranslate(model(DEFAULT), ["I'm home."])[0].translation);
    assert.equal(again.text, 'Je suis chez moi.');
    assert.equal(again.restarts, 0);
    assert.deepEqual(errors, []);
  });

  test('another model chosen while a translation runs replaces it', async () => {
    const r = await submit([LONG], { model: 'bahdanau-d2l' });
    // The Bahdanau model loads (the running beam search is cancelled) and translates LONG.
    assert.equal(r.restarts, 1);
    assert.match(r.info, /^bahdanau-d2l: Bahdanau GRU/);
    const [want] = nativeTranslate(model('bahdanau-d2l'), [LONG], ['--beam', '8']);
    await page.waitForFunction((t) => document.getElementById('output-text').textContent === t, want.translation);
    // Only the notes on what the book's small model reads, nothing about the cancel.
    assert.equal(await page.textContent('#error'), 'Unknown words (the model reads <unk>): are, at, are, and, happy · ' +
      'The sentence has more than 9 tokens; the model sees only the first 9, as in the book.');
    assert.equal(await page.getAttribute('#error', 'class'), 'error warn');
    assert.deepEqual(errors, []);
  });

  test("the worker's heap comes back over loads and translations", async () => {
    // The page's own worker: models chosen in turn, each translating the sentence in the box.
    const choose = (name) => page.evaluate(async (name) => {
      const n = Number(document.body.dataset.translations);
      const sel = document.getElementById('model');
      sel.value = name;
      sel.dispatchEvent(new Event('change'));
      await new Promise((resolve) => {
        const obs = new MutationObserver(() => Number(document.body.dataset.translations) > n && (obs.disconnect(), resolve()));
        obs.observe(document.body, { attributes: true });
      });
    }, name);
    const restarts = await page.evaluate(() => window.attnlitePage.translator().restarts);
    for (let i = 0; i < 3; ++i) {
      await choose('bahdanau-d2l');
      await choose('transformer-d2l');
    }
    assert.equal(await page.evaluate(() => window.attnlitePage.translator().restarts), restarts, 'the same worker throughout');
    // A client of its own: with its model unloaded after 40 rounds of loads and beam-8
    // translations, nothing is left in use (placement makes the count in between vary by a few
    // bytes: aligned blocks), and the memory stops growing: one step at most over all rounds,
    // none in the last 20. (When the allocator needs its one extra step of memory depends on
    // placement: 8 -> 10 MB in round 2, 7 or 17 with different builds, and never after in 60
    // rounds.)
    const r = await page.evaluate(async (LONG) => {
      const { TranslatorClient } = await import('./translator-client.js');
      const wasm = await WebAssembly.compileStreaming(fetch('attnlite.wasm'));
      const c = new TranslatorClient(wasm);
      const file = async (name) => new Uint8Array(await (await fetch(`models/${name}.safetensors`)).arrayBuffer());
      const [b, d] = [await file('bahdanau-d2l'), await file('transformer-d2l')];
      const empty = await c.heap();
      const sizes = [];  // memory size after each round
      for (let i = 0; i < 40; ++i) {
        for (const bytes of [b, d]) {
          await c.load(bytes);
          await c.translate(LONG, { beam: 8 });
        }
        sizes.push((await c.heap()).size);
      }
      const last = await c.heap();
      await c.unload();
      const end = await c.heap();
      c.free();
      return { empty, last, end, restarts: c.restarts, sizes };
    }, LONG);
    assert.equal(r.restarts, 0);
    assert.equal(r.empty.used, 0, 'a fresh worker has nothing in use');
    assert.ok(r.last.used > 0);
    assert.equal(r.end.used, 0, 'bytes in use after the model is unloaded');
    const steps = r.sizes.filter((size, i) => i > 0 && size !== r.sizes[i - 1]).length;
    assert.ok(steps <= 1, `memory grew ${steps} times over 40 rounds: ${r.sizes.join(' ')}`);
    assert.equal(r.sizes[39], r.sizes[19], `memory size over the last 20 rounds: ${r.sizes.join(' ')}`);
    assert.equal(r.last.size, r.sizes[39]);
    assert.deepEqual(errors, []);
  });

  test('a TranslatorClient freed while it translates: clear errors, free twice is harmless', async () => {
    const r = await page.evaluate(async (LONG) => {
      const { TranslatorClient } = await import('./translator-client.js');
      const wasm = await WebAssembly.compileStreaming(fetch('attnlite.wasm'));
      const c = new TranslatorClient(wasm);
      const bytes = new Uint8Array(await (await fetch('models/transformer-d2l.safetensors')).arrayBuffer());
      const info = await c.load(bytes);
      const first = await c.translate("i'm home .");
      const running = c.translate(LONG, { beam: 8 }).then(() => 'finished', (e) => `${e.name}: ${e.message}`);
      c.free();
      c.free();
      const later = await c.translate('go .').then(() => 'finished', (e) => `${e.name}: ${e.message}`);
      const load = await c.load(bytes).then(() => 'loaded', (e) => `${e.name}: ${e.message}`);
      // A bad file: the library's error, and the model before it stays in use.
      const d = new TranslatorClient(wasm);
      await d.load(bytes);
      const bad = await d.load(bytes.subarray(0, 100)).then(() => 'loaded', (e) => `${e.name}: ${e.message}`);
      const still = (await d.translate('go .')).text;
      const notString = await d.translate(42).then(() => 'finished', (e) => `${e.name}: ${e.message}`);
      d.free();
      return { kind: info.kind, first: first.text, running: await running, later, load, bad, still, notString };
    }, LONG);
    assert.equal(r.kind, 'transformer');
    assert.equal(r.first, 'je suis chez moi .');
    assert.equal(r.running, 'Error: the translator was freed');
    assert.equal(r.later, 'Error: the translator was freed');
    assert.equal(r.load, 'Error: the translator was freed');
    assert.match(r.bad, /^AttnliteError: invalid safetensors file/);
    assert.equal(r.still, nativeTranslate(model('transformer-d2l'), ['go .'])[0].translation);
    assert.equal(r.notString, 'TypeError: translate: the sentence must be a string, got a number');
    assert.deepEqual(errors, []);
  });
});
