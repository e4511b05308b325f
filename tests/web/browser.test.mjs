// The page in a real browser (Debian's Chromium, headless, through playwright-core):
// translate, read canvas pixels, switch views, hover, download the PNG (the CLI's figure) and decode it, load
// a corrupted model, beam search and its n-best list, the model list with and without the
// default (sub-word, whole-corpus) model, the Nadaraya-Watson slider, and save screenshots to build/web-test/.
// The language model section: lm-browser.test.mjs. Chromium and the page's setup:
// browser-common.mjs (without a browser the test is skipped, unless ATTNLITE_REQUIRE_BROWSER=1,
// as tools/test.sh sets).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertSameFigure, chromiumPath, cliFigureOfPage, haveBrowser, lum, openPage, outDir, outFile, translateOn } from './browser-common.mjs';
import { models, nativeTranslate, root } from './common.mjs';
import { serve } from './serve.mjs';

// The page's default translator (web/app.js DEFAULT_MODEL) is first in the list and loads
// when its file is there: the whole-corpus Transformer on sub-words, cased. The whole-corpus
// word model comes next, then the book's two models.
const DEFAULT = 'transformer-fra-bpe';
const WHOLE = 'transformer-fra';
const haveDefault = existsSync(join(root, 'models', `${DEFAULT}.safetensors`));
const haveWhole = existsSync(join(root, 'models', `${WHOLE}.safetensors`));
// The sub-word model's chips: the book's four sentences as written, then three typed as on a
// phone (web/app.js EXAMPLES.subword).
const SUBWORD_CHIPS = ['Go.', 'I lost.', "He's calm.", "I'm home.", 'where is the station', 'Don\u2019t worry', 'i love you'];

describe('the page in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, page, server, url, firstModel, first, pageErrors;

  before(async () => {
    ({ browser, page, server, url, firstModel, first, pageErrors } = await openPage());
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  const translate = (sentence) => translateOn(page, sentence);

  // Canvas pixels at the centre of every cell of panel 0, with the weights drawn there.
  async function cellColours() {
    return page.evaluate(() => {
      const f = window.attnlitePage.figure();
      const c = document.getElementById('heatmap');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const start = (i, n, len) => Math.floor((i * len + n - 1) / n);
      const P = f.layout.panels[0];
      const cells = [];
      for (let q = 0; q < f.q; ++q) {
        for (let k = 0; k < f.k; ++k) {
          const x = P.x + ((start(k, f.k, P.w) + start(k + 1, f.k, P.w)) >> 1);
          const y = P.y + ((start(q, f.q, P.h) + start(q + 1, f.q, P.h)) >> 1);
          const o = (y * c.width + x) * 4;
          cells.push({ q, k, x, y, w: f.mats[q * f.k + k], rgb: [px[o], px[o + 1], px[o + 2]] });
        }
      }
      return { cells, width: c.width, height: c.height, panels: f.layout.panels.length, q: f.q, k: f.k, scale: f.s };
    });
  }

  async function canvasHash() {
    return page.evaluate(() => {
      const c = document.getElementById('heatmap');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let h = 2166136261;
      for (let i = 0; i < d.length; i += 3) h = Math.imul(h ^ d[i], 16777619);
      return `${c.width}x${c.height}:${h >>> 0}`;
    });
  }

  test('the model list starts with the sub-word whole-corpus model, loaded when its file is there', async () => {
    const options = await page.$$eval('#model option', (os) => os.map((o) => ({ value: o.value, text: o.textContent, disabled: o.disabled })));
    assert.deepEqual(options.slice(0, 4).map((o) => o.value), [DEFAULT, WHOLE, 'transformer-d2l', 'bahdanau-d2l']);
    assert.match(options[0].text, /^Transformer, whole corpus, sub-words \(int8\)/);
    assert.match(options[1].text, /^Transformer, whole corpus, words \(int8\)/);
    assert.equal(options[0].disabled, !haveDefault);
    assert.equal(options[0].text.endsWith('(not available)'), !haveDefault);
    assert.equal(options[1].disabled, !haveWhole);
    assert.equal(options[1].text.endsWith('(not available)'), !haveWhole);
    assert.equal(firstModel, haveDefault ? DEFAULT : haveWhole ? WHOLE : 'transformer-d2l');
    if (haveDefault) {
      // The sub-word model reads the English as written: the sentence box and the chips take
      // the book's sentences cased, and the French is the detokenized text.
      assert.deepEqual(first, {
        sentence: "I'm home.", text: 'Je suis chez moi.', examples: SUBWORD_CHIPS,
        info: 'transformer-fra-bpe: Transformer · 3 layers · 4 heads · sub-words: 8106 English / 8106 French pieces, cased · ' +
          '7592 KB of weights · up to 32 pieces',  // weight_bytes 7774032 (attnlite info)
      });
    }
  });

  // The same page served with the default's file hidden, with the real file, and with a file
  // this build cannot load in its place (and with the whole-corpus word model hidden too):
  // whatever this checkout holds, the page loads a model and translates. Without the default,
  // the next model in the list that is there loads: the whole-corpus word model, else the
  // book's Transformer.
  const cases = [
    { file: 'missing', files: { [`/models/${DEFAULT}.safetensors`]: null } },
    { file: 'present', files: {}, skip: !haveDefault && `models/${DEFAULT}.safetensors is not here` },
    { file: 'unloadable', files: { [`/models/${DEFAULT}.safetensors`]: join(outDir, 'truncated.safetensors') } },
    { file: `missing, and models/${WHOLE}.safetensors too`,
      files: { [`/models/${DEFAULT}.safetensors`]: null, [`/models/${WHOLE}.safetensors`]: null } },
  ];
  for (const { file, files, skip = false } of cases) {
    test(`page load with models/${DEFAULT}.safetensors ${file}`, { skip }, async () => {
      const broken = join(outDir, 'truncated.safetensors');
      writeFileSync(broken, readFileSync(join(root, 'models', 'transformer-d2l.safetensors')).subarray(0, 100));
      const alt = await serve(join(root, 'web'), 0, { files });
      const p = await browser.newPage();
      const errors = [];
      p.on('pageerror', (e) => errors.push(e.message));
      try {
        await p.goto(alt.url);
        await p.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
        const wordModel = haveWhole && !(`/models/${WHOLE}.safetensors` in files) ? WHOLE : 'transformer-d2l';
        const used = file === 'present' ? DEFAULT : wordModel;
        assert.equal(await p.inputValue('#model'), used);
        const opt = p.locator(`#model option[value=${DEFAULT}]`);
        assert.equal(await opt.isDisabled(), file !== 'present');
        assert.match(await p.textContent('#model-info'), new RegExp(`^${used}: Transformer`));
        if (used === DEFAULT) {
          assert.equal(await p.inputValue('#sentence'), "I'm home.");
          assert.equal(await p.textContent('#output-text'), 'Je suis chez moi.');
          assert.deepEqual(await p.$$eval('#tokens .token b', (bs) => bs.map((b) => b.textContent)),
            ['Je_', 'suis_', 'chez_', 'moi_', '._']);
        } else {
          // A word model: the book's sentences lowercased, spaced punctuation.
          assert.equal(await p.inputValue('#sentence'), "i'm home .");
          assert.deepEqual(await p.$$eval('#examples .chip', (bs) => bs.map((b) => b.textContent)), ['go .', 'i lost .', "he's calm .", "i'm home ."]);
          assert.equal(await p.textContent('#output-text'), 'je suis chez moi .');
        }
        if (file === 'unloadable') {
          assert.match(await opt.textContent(), /\(could not load\)$/);
          assert.match(await p.textContent('#error'),
            new RegExp(`^Could not load ${DEFAULT} \\(invalid safetensors file.*showing ${used} instead\\.$`));
          assert.equal(await p.getAttribute('#error', 'class'), 'error warn');
        } else {
          assert.equal(await p.isHidden('#error'), true);
        }
        assert.deepEqual(errors, []);
      } finally {
        await p.close();
        alt.server.close();
      }
    });
  }

  // What people type: the default model on a fresh page reads a phone's apostrophe as the
  // straight one (the same translation and pieces as the CLI gives "I'm home."), and the
  // casually typed chips translate as the CLI translates them.
  test('typed input: a typographic apostrophe, no capital, no final stop', { skip: !haveDefault && `models/${DEFAULT}.safetensors is not here` }, async () => {
    const p = await browser.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(e.message));
    try {
      await p.goto(url);
      await p.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
      assert.equal(await p.inputValue('#model'), DEFAULT);
      assert.equal(await p.getAttribute('#sentence', 'placeholder'), 'Type in English, as you would on a phone');
      const model = join(root, 'models', `${DEFAULT}.safetensors`);
      const [straight, dont, station] = nativeTranslate(model, ["I'm home.", "Don't worry", 'where is the station']);
      await translateOn(p, 'I\u2019m home.');
      assert.equal(await p.textContent('#output-text'), straight.translation);
      const src = await p.evaluate(() => window.attnlitePage.result().srcWords);
      assert.deepEqual(src, ["I'm_", 'home_', '._'], 'the pieces of the normalized sentence');
      for (const [chip, want] of [['Don\u2019t worry', dont], ['where is the station', station]]) {
        const n = await p.evaluate(() => Number(document.body.dataset.translations));
        await p.click(`#examples .chip:text-is("${chip}")`);
        await p.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
        assert.equal(await p.inputValue('#sentence'), chip);
        assert.equal(await p.textContent('#output-text'), want.translation, chip);
      }
      assert.equal(await p.isHidden('#error'), true);
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  });

  test("i'm home . translates and the cross-attention map is drawn", async () => {
    await translate("i'm home .");
    assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
    assert.equal(await page.locator('#tokens .token').count(), 5);
    assert.equal(await page.isHidden('#error'), true);
    const { cells, q, k } = await cellColours();
    assert.equal(q, 6);  // five tokens and <eos>
    assert.equal(k, 4);  // i'm home . <eos>
    // The darkest cell (Reds) is the largest weight, the lightest the smallest.
    const byWeight = [...cells].sort((a, b) => b.w - a.w);
    const lums = cells.map((c) => lum(c.rgb));
    assert.equal(lum(byWeight[0].rgb), Math.min(...lums), 'the largest weight has the darkest cell');
    assert.equal(lum(byWeight.at(-1).rgb), Math.max(...lums), 'the smallest weight has the lightest cell');
    assert.ok(Math.max(...lums) - Math.min(...lums) > 100, 'from near white to dark red');
    for (let i = 1; i < byWeight.length; ++i)
      assert.ok(lum(byWeight[i].rgb) >= lum(byWeight[i - 1].rgb) - 1e-9, 'colour darkens with the weight');
  });

  test('hover shows the two words and the weight', async () => {
    const { cells, scale } = await cellColours();
    const target = cells.find((c) => c.q === 1 && c.k === 0);  // "suis" -> "i'm"
    await page.locator('#heatmap').scrollIntoViewIfNeeded();
    const box = await page.locator('#heatmap').boundingBox();
    await page.mouse.move(box.x + target.x / scale, box.y + target.y / scale);
    const text = await page.textContent('#hover');
    assert.match(text, /suis → i'm/);
    assert.ok(text.includes(target.w.toFixed(4)), `${text} shows ${target.w.toFixed(4)}`);
    assert.equal(await page.isVisible('#tooltip'), true);
  });

  test('layer, head and kind selectors redraw; all heads draws the grid', async () => {
    const h0 = await canvasHash();
    await page.click('[data-kind=enc]');
    await page.selectOption('#layer', '1');
    await page.selectOption('#head', '2');
    const h1 = await canvasHash();
    assert.notEqual(h1, h0);
    assert.match(await page.textContent('#attn-caption'), /Encoder self-attention, layer 2, head 3/);
    assert.deepEqual(await page.evaluate(() => window.attnlitePage.view()),
      { kind: 'enc', layer: 1, head: 2, all: false, pad: false, cmap: 'Reds' });
    await page.click('[data-kind=dec]');
    assert.notEqual(await canvasHash(), h1);
    const dec = await cellColours();
    assert.equal(dec.q, 6);
    // Decoder self-attention is causal: no weight above the diagonal.
    for (const c of dec.cells) if (c.k > c.q) assert.equal(c.w, 0);
    await page.check('#all-heads');
    const grid = await cellColours();
    assert.equal(grid.panels, 8);  // 2 layers x 4 heads
    assert.equal(await page.locator('#row-labels div').count(), 2);
    assert.equal(await page.isDisabled('#layer'), true);
    await page.uncheck('#all-heads');
    await page.click('[data-kind=cross]');
    await page.selectOption('#layer', '0');
    await page.selectOption('#head', '0');
  });

  test('colormap choice: viridis puts its brightest colour on the largest weight', async () => {
    await page.selectOption('#cmap', 'viridis');
    const { cells } = await cellColours();
    const max = cells.reduce((a, b) => (b.w > a.w ? b : a));
    assert.deepEqual(max.rgb, [253, 231, 37]);  // viridis(1)
    await page.selectOption('#cmap', 'Blues');
    const blue = (await cellColours()).cells.find((c) => c.q === max.q && c.k === max.k);
    assert.ok(blue.rgb[2] > blue.rgb[0], `Blues: ${blue.rgb}`);
    await page.selectOption('#cmap', 'Reds');
  });

  test('Download PNG saves the figure of `attnlite heatmap translate`, named after the model and the view', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.match(download.suggestedFilename(), /^attnlite-transformer-d2l-cross-L1-H1\.png$/);
    const file = outFile(download.suggestedFilename());
    await download.saveAs(file);
    const { PNG } = await import('pngjs');
    assertSameFigure(PNG.sync.read(readFileSync(file)), await cliFigureOfPage(page));
  });

  test('a corrupted model file shows an error and keeps the current model', async () => {
    const good = readFileSync(join(root, 'models', 'transformer-d2l.safetensors'));
    await page.setInputFiles('#model-file', { name: 'broken.safetensors', mimeType: 'application/octet-stream',
      buffer: good.subarray(0, 100) });
    await page.waitForSelector('#error:not([hidden])');
    const msg = await page.textContent('#error');
    assert.match(msg, /^Could not load broken\.safetensors: invalid safetensors file/);
    await translate("i'm home .");
    assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
    assert.equal(await page.isHidden('#error'), true);
  });

  test('your own (valid) model file loads', async () => {
    const good = readFileSync(join(root, 'models', 'transformer-d2l.safetensors'));
    await page.setInputFiles('#model-file', { name: 'mine.safetensors', mimeType: 'application/octet-stream', buffer: good });
    await page.waitForFunction(() => document.getElementById('model').value === 'file:mine.safetensors');
    assert.match(await page.textContent('#model-info'), /^mine\.safetensors: Transformer/);
    await page.selectOption('#model', 'transformer-d2l');
    await page.waitForFunction(() => document.getElementById('model-info').textContent.startsWith('transformer-d2l'));
  });

  // A sub-word translator (tests/fixtures/bpe_tiny.safetensors: random weights, so its French
  // is "to to to ...", PyTorch's output in tests/fixtures/bpe_tiny.json) as the user's own
  // file: the English goes in as written, the heatmap's source labels are its pieces, the
  // French shown is the detokenized text (the chips and the map's rows keep the pieces).
  test('a sub-word model of your own: cased input, pieces on the map, detokenized French', async () => {
    const bpe = JSON.parse(readFileSync(join(root, 'tests', 'fixtures', 'bpe_tiny.json'), 'utf8')).sentences
      .find((s) => s.source === 'Where is the station?');
    const n = await page.evaluate(() => Number(document.body.dataset.translations));
    await page.setInputFiles('#model-file', { name: 'bpe_tiny.safetensors', mimeType: 'application/octet-stream',
      buffer: readFileSync(join(root, 'tests', 'fixtures', 'bpe_tiny.safetensors')) });
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.equal(await page.inputValue('#model'), 'file:bpe_tiny.safetensors');
    assert.match(await page.textContent('#model-info'), /^bpe_tiny\.safetensors: Transformer .* sub-words: 406 English \/ 406 French pieces, cased/);
    assert.deepEqual(await page.$$eval('#examples .chip', (bs) => bs.map((b) => b.textContent)), SUBWORD_CHIPS);
    await translate('Where is the station?');
    assert.equal(await page.inputValue('#sentence'), 'Where is the station?', 'not lowercased');
    assert.equal(await page.isHidden('#error'), true);
    // The French: PyTorch's detokenized text, marked French and announced.
    assert.equal(await page.textContent('#output-text'), bpe.f32.text);
    assert.equal(await page.getAttribute('#output-text', 'lang'), 'fr');
    assert.equal(await page.$eval('#output-text', (e) => e.closest('[aria-live]')?.getAttribute('aria-live')), 'polite');
    assert.deepEqual(await page.$$eval('#tokens .token b', (bs) => bs.map((b) => b.textContent)), bpe.f32.pieces);
    // The map: the pieces (and <eos>) on the source axis, the predicted pieces on the other.
    const f = await page.evaluate(() => {
      const x = window.attnlitePage.figure(), r = window.attnlitePage.result();
      return { k: x.kLabels, q: x.qLabels, xlabel: x.xlabel, sentence: r.sentence, srcWords: r.srcWords, subword: r.subword };
    });
    assert.deepEqual(f.k, [...bpe.pieces, '<eos>']);
    assert.deepEqual(f.q, bpe.f32.pieces);
    assert.equal(f.xlabel, 'Keys: source pieces');
    assert.deepEqual([f.sentence, f.srcWords, f.subword], ['Where is the station?', bpe.pieces, true]);
    assert.match(await page.textContent('#result-info'), /source pieces: Wh ere_ is_ the_ st at i on_ \?_ <eos>$/);
    // A character never seen in training is named as such, not as an unknown word.
    await translate('Look at 漢字 now.');
    assert.equal(await page.textContent('#error'), 'Characters never seen in training (the model reads <unk> for each): 漢 字');
    assert.equal(await page.getAttribute('#error', 'class'), 'error warn');
    await page.screenshot({ path: join(outDir, 'screenshot-subword.png'), fullPage: true });
    // Back to the book's Transformer: its word examples, its sentence.
    await page.fill('#sentence', "I'm home.");
    const m = await page.evaluate(() => Number(document.body.dataset.translations));
    await page.selectOption('#model', 'transformer-d2l');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, m);
    assert.match(await page.textContent('#model-info'), /^transformer-d2l: /);
    assert.equal(await page.inputValue('#sentence'), "i'm home .");
    assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
    assert.deepEqual(pageErrors, []);
  });

  test('empty input and unknown words show in the error box', async () => {
    await translate('   ');
    assert.match(await page.textContent('#error'), /input is empty/);
    await translate('zyzzyva .');
    assert.match(await page.textContent('#error'), /Unknown word.*zyzzyva/);
    assert.equal(await page.getAttribute('#error', 'class'), 'error warn');
  });

  // A text of several sentences is cut as the CLI cuts it: each translated alone, the French
  // joined; a button per sentence chooses whose tokens and maps are shown.
  test('a text of two sentences: both translated, the tokens and maps of the one chosen', async () => {
    const [home, go] = nativeTranslate(join(root, 'models', 'transformer-d2l.safetensors'), ["i'm home .", 'go .']);
    const both = `${home.translation} ${go.translation}`;
    const chips = () => page.$$eval('#sentences .chip', (bs) => bs.map((b) => `${b.textContent}:${b.getAttribute('aria-pressed')}`));
    await translate("i'm home . go .");
    assert.equal(await page.textContent('#output-text'), both);
    assert.equal(await page.isVisible('#sentences'), true);
    assert.deepEqual(await chips(), ["i'm home .:true", 'go .:false']);
    assert.equal(await page.evaluate(() => window.attnlitePage.results().length), 2);
    assert.equal(await page.locator('#tokens .token').count(), home.tokens.length);
    const homeMap = await canvasHash();
    await page.click('#sentences .chip:text-is("go .")');
    assert.equal(await page.evaluate(() => window.attnlitePage.result().sentence), 'go .');
    assert.deepEqual(await chips(), ["i'm home .:false", 'go .:true']);
    assert.equal(await page.locator('#tokens .token').count(), go.tokens.length);
    assert.equal(await page.textContent('#output-text'), both, 'the French of the whole text stays');
    assert.notEqual(await canvasHash(), homeMap, 'the map of "go ."');
    assert.equal((await cellColours()).k, 3, 'go . <eos>');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(outDir, 'sentences-390.png'), fullPage: false });
    await page.setViewportSize({ width: 1200, height: 900 });
    await translate("i'm home .");
    assert.equal(await page.isHidden('#sentences'), true, 'one sentence: no buttons');
    assert.deepEqual(pageErrors, []);
  });

  test('the Bahdanau model shows its single cross-attention map', { skip: !models.some((m) => m.name === 'bahdanau-d2l') && 'models/bahdanau-d2l.safetensors is not here yet' }, async () => {
    await page.fill('#sentence', "i'm home .");
    const n = await page.evaluate(() => Number(document.body.dataset.translations));
    await page.selectOption('#model', 'bahdanau-d2l');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.equal(await page.isDisabled('[data-kind=enc]'), true);
    assert.equal(await page.isDisabled('[data-kind=dec]'), true);
    assert.equal(await page.isDisabled('#all-heads'), true);
    const { panels, k } = await cellColours();
    assert.equal(panels, 1);
    assert.equal(k, 4);
    assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
    await page.screenshot({ path: join(outDir, 'screenshot-bahdanau.png'), fullPage: true });
    await page.selectOption('#model', 'transformer-d2l');
    await page.waitForFunction(() => document.getElementById('model-info').textContent.startsWith('transformer-d2l'));
  });

  test("beam 4: the n-best list of i'm home . and the best hypothesis's attention", async () => {
    assert.equal(await page.inputValue('#beam'), '1');  // greedy by default
    assert.equal(await page.isHidden('#nbest-box'), true);
    const greedy = await canvasHash();
    await page.selectOption('#beam', '4');
    await translate("i'm home .");
    assert.equal(await page.isHidden('#error'), true);
    assert.equal(await page.isVisible('#nbest-box'), true);
    const items = await page.$$eval('#nbest li', (ls) => ls.map((l) => ({
      text: l.querySelector('.hyp').textContent, shown: l.querySelector('.score').textContent, score: Number(l.dataset.score),
    })));
    assert.equal(items.length, 4);
    for (let i = 1; i < items.length; ++i) assert.ok(items[i].score <= items[i - 1].score, 'sorted by score');
    for (const it of items) assert.ok(it.shown.startsWith(it.score.toFixed(4)), `${it.shown} shows ${it.score}`);
    assert.equal(new Set(items.map((i) => i.text)).size, 4);
    assert.equal(items[0].text, await page.textContent('#output-text'));
    assert.match(await page.textContent('#result-info'), /beam 4, α 0/);
    // The attention map is the best hypothesis's, drawn like any other.
    const r = await page.evaluate(() => {
      const x = window.attnlitePage.result();
      return { beam: x.beam, steps: x.steps, text: x.text, best: x.nbest[0].text, n: x.nbest.length };
    });
    assert.deepEqual([r.beam, r.n, r.text], [4, 4, r.best]);
    const { cells, q, k } = await cellColours();
    assert.equal(q, r.steps);
    assert.equal(k, 4);
    const lums = cells.map((c) => lum(c.rgb));
    assert.ok(Math.max(...lums) - Math.min(...lums) > 100, 'the canvas is drawn');
    const byWeight = [...cells].sort((a, b) => b.w - a.w);
    assert.equal(lum(byWeight[0].rgb), Math.min(...lums), 'the largest weight has the darkest cell');
    // alpha retranslates; a bad alpha is the library's error.
    let n = await page.evaluate(() => Number(document.body.dataset.translations));
    await page.fill('#alpha', '0.75');
    await page.press('#alpha', 'Tab');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.match(await page.textContent('#result-info'), /beam 4, α 0\.75/);
    assert.equal(await page.locator('#nbest li').count(), 4);
    await page.screenshot({ path: join(outDir, 'screenshot-beam.png'), fullPage: true });
    await page.fill('#alpha', '5');
    await page.press('#alpha', 'Tab');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.textContent('#error'), /length penalty alpha must be a number in \[0, 2\], got 5/);
    await page.fill('#alpha', '0');
    await page.press('#alpha', 'Tab');
    await page.selectOption('#beam', '1');
    n = await page.evaluate(() => Number(document.body.dataset.translations));
    await translate("i'm home .");
    assert.equal(await page.isHidden('#error'), true);
    assert.equal(await page.isHidden('#nbest-box'), true);
    assert.equal(await canvasHash(), greedy);
  });

  test('the Nadaraya-Watson slider redraws the regression and its weights', async () => {
    const snap = () => page.evaluate(() => {
      const c = document.getElementById('nw-heatmap');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let h = 0;
      for (let i = 0; i < d.length; i += 7) h = (h * 31 + d[i]) | 0;
      return h;
    });
    const a = await snap();
    await page.fill('#nw-width', '2');  // w = e^2
    assert.equal(await page.textContent('#nw-value'), Math.exp(2).toFixed(2));
    assert.notEqual(await snap(), a);
    await page.fill('#nw-width', '0');
  });

  test('screenshot and no script errors', async () => {
    await translate("i'm home .");
    await page.screenshot({ path: join(outDir, 'screenshot.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});

// The page is meant to work from `python3 -m http.server` run in web/: the link web/models
// is followed and modules and WebAssembly get JavaScript and wasm MIME types.
test('python3 -m http.server in web/ serves the page, the module and the models', async (t) => {
  const port = await new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => ok(p));
    });
  });
  const proc = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1'], { cwd: join(root, 'web'), stdio: 'ignore' });
  t.after(() => proc.kill());
  const base = `http://127.0.0.1:${port}/`;
  let ok = false;
  for (let i = 0; i < 50 && !ok; ++i) {
    try {
      ok = (await fetch(base)).ok;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  assert.ok(ok, 'http.server answers');
  for (const [path, type] of [['app.js', /javascript/], ['attnlite-api.mjs', /javascript/], ['api/core.mjs', /javascript/],
    ['attnlite.mjs', /javascript/], ['attnlite-figures.mjs', /javascript/], ['api/figures.mjs', /javascript/],
    ['attnlite.wasm', /application\/wasm/], ['attnlite-figures.wasm', /application\/wasm/]]) {
    const r = await fetch(base + path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-type'), type, path);
  }
  const m = await fetch(`${base}models/transformer-d2l.safetensors`);
  assert.equal(m.status, 200);
  assert.ok(Buffer.from(await m.arrayBuffer()).equals(readFileSync(join(root, 'models', 'transformer-d2l.safetensors'))));
});
