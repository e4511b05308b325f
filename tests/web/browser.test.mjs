// The page in a real browser (Debian's Chromium, headless, through playwright-core):
// translate, read canvas pixels, switch views, hover, download the PNG and decode it, load
// a corrupted model, beam search and its n-best list, the model list with and without the
// whole-corpus model, the language model (lazy download, words one by one, the growing
// causal map, options and their inline errors, Stop, 1280 and 390 px), and save
// screenshots to build/web-test/.
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; without one the test is skipped, unless
// ATTNLITE_REQUIRE_BROWSER=1 (as tools/test.sh sets).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { models, root } from './common.mjs';
import { serve } from './serve.mjs';

const chromiumPath = process.env.ATTNLITE_CHROMIUM ?? '/usr/bin/chromium';
const haveBrowser = existsSync(chromiumPath);
if (!haveBrowser && process.env.ATTNLITE_REQUIRE_BROWSER === '1')
  throw new Error(`${chromiumPath} is missing (apt-get install chromium)`);
const outDir = join(root, 'build', 'web-test');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const lum = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;

// The whole-corpus model is first in the list and loads by default when its file is there.
const WHOLE = 'transformer-fra';
const haveWhole = existsSync(join(root, 'models', `${WHOLE}.safetensors`));

describe('the page in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, page, server, url, firstModel;
  const pageErrors = [];
  const requests = [];  // every request of the page: the language model is fetched lazily

  before(async () => {
    mkdirSync(outDir, { recursive: true });
    ({ server, url } = await serve(join(root, 'web')));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => requests.push({ url: r.url(), method: r.method() }));
    await page.goto(url);
    // The page loads the first shipped model and translates the default sentence.
    await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
    firstModel = await page.inputValue('#model');
    // The tests below are written for the book's Transformer.
    if (firstModel !== 'transformer-d2l') {
      await page.selectOption('#model', 'transformer-d2l');
      await page.waitForFunction(() => document.body.dataset.translations === '2', null, { timeout: 30000 });
    }
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  // Translate and wait for the page to finish (a counter on <body> moves on, or an error shows).
  async function translate(sentence) {
    const before = await page.evaluate(() => Number(document.body.dataset.translations ?? 0));
    await page.fill('#sentence', sentence);
    await page.click('#translate');
    await page.waitForFunction((n) => Number(document.body.dataset.translations) > n || document.body.dataset.state === 'error',
      before, { timeout: 10000 });
  }

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

  test('the model list starts with the whole-corpus model, loaded when its file is there', async () => {
    const options = await page.$$eval('#model option', (os) => os.map((o) => ({ value: o.value, text: o.textContent, disabled: o.disabled })));
    assert.deepEqual(options.slice(0, 3).map((o) => o.value), [WHOLE, 'transformer-d2l', 'bahdanau-d2l']);
    assert.match(options[0].text, /^Transformer, whole corpus \(int8\)/);
    assert.equal(options[0].disabled, !haveWhole);
    assert.equal(options[0].text.endsWith('(not available)'), !haveWhole);
    assert.equal(firstModel, haveWhole ? WHOLE : 'transformer-d2l');
  });

  // The same page served with the whole-corpus file hidden, with the book's Transformer
  // standing in for it, and with a file this build cannot load in its place: whatever this
  // checkout holds, the page loads a model and translates.
  for (const file of ['missing', 'present', 'unloadable']) {
    test(`page load with models/${WHOLE}.safetensors ${file}`, async () => {
      const broken = join(outDir, 'truncated.safetensors');
      writeFileSync(broken, readFileSync(join(root, 'models', 'transformer-d2l.safetensors')).subarray(0, 100));
      const stand = { missing: null, present: join(root, 'models', 'transformer-d2l.safetensors'), unloadable: broken };
      const alt = await serve(join(root, 'web'), 0, { files: { [`/models/${WHOLE}.safetensors`]: stand[file] } });
      const p = await browser.newPage();
      const errors = [];
      p.on('pageerror', (e) => errors.push(e.message));
      try {
        await p.goto(alt.url);
        await p.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
        const used = file === 'present' ? WHOLE : 'transformer-d2l';
        assert.equal(await p.inputValue('#model'), used);
        const opt = p.locator(`#model option[value=${WHOLE}]`);
        assert.equal(await opt.isDisabled(), file !== 'present');
        assert.match(await p.textContent('#model-info'), new RegExp(`^${used}: Transformer`));
        assert.equal(await p.textContent('#output-text'), 'je suis chez moi .');
        if (file === 'unloadable') {
          assert.match(await opt.textContent(), /\(could not load\)$/);
          assert.match(await p.textContent('#error'), /^Could not load transformer-fra \(invalid safetensors file.*showing transformer-d2l instead\.$/);
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

  test('Download PNG saves the canvas, pixel for pixel', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.match(download.suggestedFilename(), /^attnlite-transformer-d2l-cross-L1-H1\.png$/);
    const file = join(outDir, download.suggestedFilename());
    await download.saveAs(file);
    const { PNG } = await import('pngjs');
    const png = PNG.sync.read(readFileSync(file));
    const canvas = await page.evaluate(() => {
      const c = document.getElementById('heatmap');
      return { w: c.width, h: c.height, px: Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data) };
    });
    assert.equal(png.width, canvas.w);
    assert.equal(png.height, canvas.h);
    assert.ok(Buffer.from(canvas.px).equals(png.data), 'decoded PNG equals the canvas');
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

  test('empty input and unknown words show in the error box', async () => {
    await translate('   ');
    assert.match(await page.textContent('#error'), /input is empty/);
    await translate('zyzzyva .');
    assert.match(await page.textContent('#error'), /Unknown word.*zyzzyva/);
    assert.equal(await page.getAttribute('#error', 'class'), 'error warn');
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

  // ---- the language model section ----
  const LM = 'models/lm-fra.safetensors';
  const haveLm = existsSync(join(root, LM));

  // Generate in the language-model section and wait until the run ends (a counter on <body>
  // moves on) or an error shows. Returns the page's snapshot of the generation.
  async function lmGenerate(prompt) {
    const before = await page.evaluate(() => Number(document.body.dataset.lmGenerations ?? 0));
    if (prompt !== undefined) await page.fill('#lm-prompt', prompt);
    await page.click('#lm-generate');
    await page.waitForFunction((n) => Number(document.body.dataset.lmGenerations ?? 0) > n || document.body.dataset.lmState === 'error',
      before, { timeout: 30000 });
    return page.evaluate(() => {
      const s = window.attnlitePage.lm.snapshot();
      return s && { text: s.text, numGenerated: s.numGenerated, positions: s.positions, eos: s.eos, unknown: s.unknown };
    });
  }

  // Canvas pixels at the centre of every cell of the language model's panel 0.
  async function lmCells() {
    return page.evaluate(() => {
      const f = window.attnlitePage.lm.figure();
      const c = document.getElementById('lm-heatmap');
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const cells = [];
      for (let q = 0; q < f.q; ++q) {
        for (let k = 0; k < f.k; ++k) {
          const r = f.layout.cell(0, 0, q, k);
          const x = r.x + (r.w >> 1), y = r.y + (r.h >> 1);
          const o = (y * c.width + x) * 4;
          cells.push({ q, k, x, y, w: f.mats[q * f.k + k], rgb: [px[o], px[o + 1], px[o + 2]] });
        }
      }
      return { cells, q: f.q, k: f.k, panels: f.layout.panels.length, scale: f.s };
    });
  }

  describe('language model', { skip: !haveLm && `${LM} is not here` }, () => {
    test('the model is fetched on the first Generate; words appear one by one and the causal map grows', async () => {
      await page.locator('#lm-card').scrollIntoViewIfNeeded();
      const fetched = () => requests.filter((r) => r.url.endsWith(LM) && r.method === 'GET').length;
      assert.equal(fetched(), 0, 'not downloaded before it is needed');
      assert.match(await page.textContent('#lm-info'), /downloaded when you first press Generate/);
      assert.equal(await page.isHidden('#lm-result'), true);
      // Record, after every DOM change, how many words are shown and how many positions the
      // map has: each step is its own task, so the counts go up one at a time.
      await page.evaluate(() => {
        window.lmSeen = [];
        new MutationObserver(() => {
          const n = document.querySelectorAll('#lm-tokens .token').length;
          const p = Number(document.getElementById('lm-heatmap').dataset.positions ?? 0);
          const last = window.lmSeen.at(-1);
          if (!last || last.n !== n || last.p !== p) window.lmSeen.push({ n, p });
        }).observe(document.getElementById('lm-card'), { subtree: true, childList: true, attributes: true });
      });
      const r = await lmGenerate('je');
      assert.equal(r.text, 'je ne suis pas en train de pleurer .');  // the native CLI's greedy text
      assert.equal(fetched(), 1);
      assert.equal(await page.textContent('#lm-text'), 'je ne suis pas en train de pleurer .');
      assert.equal(await page.locator('#lm-tokens .token').count(), 9);  // 8 words and <eos>
      assert.match(await page.textContent('#lm-result-info'), /^9 new tokens, stopped at <eos> · greedy/);
      assert.match(await page.textContent('#lm-info'), /^lm-fra: decoder-only Transformer · 3 layers · 4 heads/);
      const seen = await page.evaluate(() => window.lmSeen);
      const counts = [...new Set(seen.map((x) => x.n))];
      assert.deepEqual(counts.filter((n) => n > 0), [1, 2, 3, 4, 5, 6, 7, 8, 9], `words one by one: ${JSON.stringify(seen)}`);
      const positions = [...new Set(seen.map((x) => x.p))].filter((p) => p > 0);
      assert.deepEqual(positions, [2, 3, 4, 5, 6, 7, 8, 9, 10], 'the map grows by one position per word');
      // The map: 10 x 10 (the last word, <eos>, is never read), masked cells hatched grey
      // (not the colour of weight 0), the others in Reds with the darkest on the largest weight.
      const { cells, q, k } = await lmCells();
      assert.deepEqual([q, k], [10, 10]);
      const zero = [255, 245, 240];  // Reds at 0, the colour of a weight of 0
      const grey = (rgb) => Math.max(...rgb) - Math.min(...rgb) <= 12 && rgb[0] >= 150 && rgb[0] <= 245;
      const masked = cells.filter((c) => c.k > c.q), visible = cells.filter((c) => c.k <= c.q);
      assert.equal(masked.length, 45);
      for (const c of masked) {
        assert.ok(Number.isNaN(c.w));
        assert.ok(grey(c.rgb), `masked cell ${c.q},${c.k} is grey hatch: ${c.rgb}`);
        assert.notDeepEqual(c.rgb, zero);
      }
      for (const c of visible) assert.ok(!grey(c.rgb) || c.w < 0.02, `cell ${c.q},${c.k} (${c.w}) is coloured: ${c.rgb}`);
      const rows = new Map();
      for (const c of visible) rows.set(c.q, (rows.get(c.q) ?? 0) + c.w);
      for (const [row, sum] of rows) assert.ok(Math.abs(sum - 1) < 1e-4, `row ${row} sums to ${sum}`);
      const top = visible.reduce((a, b) => (b.w > a.w ? b : a));
      assert.equal(lum(top.rgb), Math.min(...visible.map((c) => lum(c.rgb))), 'the largest weight has the darkest cell');
      // hover: a masked cell says so, a visible one names the two words and the weight
      await page.locator('#lm-heatmap').scrollIntoViewIfNeeded();
      const box = await page.locator('#lm-heatmap').boundingBox();
      const cell = (qq, kk) => cells.find((c) => c.q === qq && c.k === kk);
      const scale = (await lmCells()).scale;
      await page.mouse.move(box.x + cell(2, 6).x / scale, box.y + cell(2, 6).y / scale);
      assert.match(await page.textContent('#lm-hover'), /ne \(position 2\) → train \(position 6\)\s+masked/);
      await page.mouse.move(box.x + cell(3, 1).x / scale, box.y + cell(3, 1).y / scale);
      assert.ok((await page.textContent('#lm-hover')).includes(`suis (position 3) → je (position 1)  ${cell(3, 1).w.toFixed(4)}`));
    });

    test('layer and head selectors redraw; all heads draws the 3 x 4 grid', async () => {
      const hash = () => page.evaluate(() => {
        const c = document.getElementById('lm-heatmap');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let h = 2166136261;
        for (let i = 0; i < d.length; i += 3) h = Math.imul(h ^ d[i], 16777619);
        return h >>> 0;
      });
      const h0 = await hash();
      await page.selectOption('#lm-layer', '1');
      await page.selectOption('#lm-head', '2');
      assert.notEqual(await hash(), h0);
      assert.match(await page.textContent('#lm-caption'), /^Causal self-attention, layer 2, head 3:/);
      await page.check('#lm-all-heads');
      assert.equal((await lmCells()).panels, 12);
      assert.equal(await page.locator('#lm-row-labels div').count(), 3);
      assert.equal(await page.isDisabled('#lm-layer'), true);
      await page.uncheck('#lm-all-heads');
      await page.selectOption('#lm-layer', '0');
      await page.selectOption('#lm-head', '0');
      assert.equal(await hash(), h0);
    });

    test("sampling with a seed gives the native CLI's text, again and again", async () => {
      await page.click('[data-mode=sample]');
      assert.equal(await page.isDisabled('#lm-temperature'), false);
      await page.fill('#lm-temperature', '1.3');
      await page.fill('#lm-topk', '0');
      await page.fill('#lm-topp', '1');
      await page.fill('#lm-seed', '7');
      // attnlite generate "nous allons" --seed 7 --temperature 1.3
      const a = await lmGenerate('nous allons');
      assert.equal(a.text, 'nous allons te protéger non plus tard .');
      assert.match(await page.textContent('#lm-result-info'), /sampled: temperature 1\.3, top-k off, top-p off, seed 7/);
      assert.equal((await lmGenerate()).text, a.text);
      // a seed past 2^53 (a BigInt on the way in): attnlite generate "nous allons" --seed
      // 12345678901234567890 --top-p 0.95 --temperature 1.2
      await page.fill('#lm-temperature', '1.2');
      await page.fill('#lm-topp', '0.95');
      await page.fill('#lm-seed', '12345678901234567890');
      assert.equal((await lmGenerate()).text, 'nous allons peindre les formulaires <unk> .');
      await page.click('[data-mode=greedy]');
      assert.equal(await page.isDisabled('#lm-temperature'), true);
    });

    test('invalid options are explained next to them, not thrown; the section keeps working', async () => {
      const n = await page.evaluate(() => Number(document.body.dataset.lmGenerations));
      await page.click('[data-mode=sample]');
      await page.fill('#lm-temperature', '0');
      await page.fill('#lm-topp', '1.5');
      await page.fill('#lm-seed', '-3');
      await page.fill('#lm-max', '2.5');
      const errors = await page.$$eval('#lm-option-errors li', (ls) => ls.map((l) => [l.dataset.field, l.textContent]));
      assert.deepEqual(errors.map((e) => e[0]), ['lm-max', 'lm-temperature', 'lm-topp', 'lm-seed']);
      assert.match(errors[0][1], /^Max tokens must be a whole number from 1 to 31, or empty for no limit/);
      assert.match(errors[1][1], /^Temperature must be a number above 0, such as 0\.8 \(got “0”\); for always the likeliest word choose Greedy\.$/);
      assert.match(errors[2][1], /^Top-p must be a number above 0 and at most 1; 1 keeps every word \(got “1\.5”\)\.$/);
      assert.match(errors[3][1], /^Seed must be a whole number from 0 to 18446744073709551615 \(got “-3”\)\.$/);
      assert.equal(await page.getAttribute('#lm-temperature', 'aria-invalid'), 'true');
      await page.click('#lm-generate');  // nothing runs
      await page.waitForTimeout(200);
      assert.equal(await page.evaluate(() => Number(document.body.dataset.lmGenerations)), n);
      assert.equal(await page.evaluate(() => document.activeElement.id), 'lm-max');
      assert.deepEqual(pageErrors, []);
      // greedy ignores the sampling fields: only max tokens is still wrong
      await page.click('[data-mode=greedy]');
      assert.equal(await page.locator('#lm-option-errors li').count(), 1);
      await page.fill('#lm-max', '3');
      assert.equal(await page.isHidden('#lm-option-errors'), true);
      assert.equal((await lmGenerate('je')).text, 'je ne suis pas');
      assert.match(await page.textContent('#lm-result-info'), /^3 new tokens, stopped at the maximum of 3 tokens/);
      await page.fill('#lm-max', '');
      await page.click('[data-mode=sample]');
      await page.fill('#lm-temperature', '0.8');
      await page.fill('#lm-topp', '0.95');
      await page.fill('#lm-seed', '0');
      await page.click('[data-mode=greedy]');
      // an empty prompt, and a prompt longer than the context: messages in the section
      await page.fill('#lm-prompt', '  ');
      await page.click('#lm-generate');
      await page.waitForSelector('#lm-message:not([hidden])');
      assert.match(await page.textContent('#lm-message'), /prompt is empty/);
      await lmGenerate(Array(32).fill('je').join(' '));
      assert.equal(await page.textContent('#lm-message'),
        'prompt of 32 words is longer than the limit: the model reads 32 positions, <bos> and at most 31 words');
      assert.equal((await lmGenerate('il est')).text, 'il est venu à la maison .');
      assert.equal(await page.isHidden('#lm-message'), true);
    });

    test('unknown prompt words are noted', async () => {
      const r = await lmGenerate('je zyzzyva');
      assert.deepEqual(r.unknown, ['zyzzyva']);
      assert.match(await page.textContent('#lm-message'), /read as <unk>: zyzzyva/);
      assert.equal(await page.getAttribute('#lm-message', 'class'), 'error warn');
      assert.equal(await page.textContent('#lm-text .unk'), 'zyzzyva');
    });

    test('Stop ends a generation early and the page stays usable', async () => {
      await page.fill('#lm-prompt', 'je');
      const n = await page.evaluate(async () => {
        const before = Number(document.body.dataset.lmGenerations);
        document.getElementById('lm-generate').click();
        await new Promise((resolve) => {
          const t = setInterval(() => {
            if (document.body.dataset.lmState === 'running') {
              clearInterval(t);
              resolve();
            }
          }, 0);
        });
        // the page answers between two words: this timer runs while the model is generating
        await new Promise((r) => setTimeout(r, 0));
        document.getElementById('lm-stop').click();
        return before;
      });
      await page.waitForFunction((k) => Number(document.body.dataset.lmGenerations) > k, n);
      assert.equal(await page.evaluate(() => document.body.dataset.lmState), 'stopped');
      assert.match(await page.textContent('#lm-result-info'), /stopped by you/);
      const words = await page.locator('#lm-tokens .token').count();
      assert.ok(words >= 1 && words < 9, `${words} words before Stop`);
      assert.equal(await page.isHidden('#lm-stop'), true);
      assert.equal(await page.isDisabled('#lm-generate'), false);
      assert.equal((await lmGenerate('je')).text, 'je ne suis pas en train de pleurer .');
    });

    test('a language-model file given to "Load your own model" becomes this section\'s model', async () => {
      await page.setInputFiles('#model-file', { name: 'my-lm.safetensors', mimeType: 'application/octet-stream',
        buffer: readFileSync(join(root, LM)) });
      await page.waitForFunction(() => document.getElementById('lm-info').textContent.startsWith('my-lm.safetensors:'));
      assert.match(await page.textContent('#error'), /my-lm\.safetensors is a language model/);
      assert.equal(await page.getAttribute('#error', 'class'), 'error warn');
      assert.equal(await page.inputValue('#model'), 'transformer-d2l', 'the translator keeps its model');
      assert.equal((await lmGenerate('il est')).text, 'il est venu à la maison .');
      await translate("i'm home .");
      assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
    });

    for (const [width, height, dpr] of [[1280, 900, 1], [390, 844, 2]]) {
      test(`at ${width} px: nothing sticks out, screenshot`, async () => {
        const ctx = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr });
        const p = await ctx.newPage();
        const errors = [];
        p.on('pageerror', (e) => errors.push(e.message));
        try {
          await p.goto(url);
          await p.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
          await p.fill('#lm-prompt', 'nous allons');
          await p.click('[data-mode=sample]');
          await p.click('#lm-generate');
          await p.waitForFunction(() => document.body.dataset.lmGenerations === '1', null, { timeout: 30000 });
          assert.equal(await p.textContent('#lm-text'), 'nous allons te voir .');  // seed 0, 0.8, 40, 0.95
          if (width >= 1000) {
            await p.check('#lm-all-heads');
          } else {
            assert.equal(await p.isDisabled('#lm-all-heads'), true, 'no grid on a phone');
            assert.equal(await p.isVisible('#lm-all-note'), true);
          }
          const over = await p.evaluate(() => {
            const out = [];
            for (const el of document.querySelectorAll('body *')) {
              const r = el.getBoundingClientRect();
              if (r.width && r.right > innerWidth + 0.5 && !el.closest('.figure-scroll')) out.push(`${el.tagName}#${el.id} ${r.right}`);
            }
            return { scroll: document.documentElement.scrollWidth, inner: innerWidth, out };
          });
          assert.deepEqual(over.out, []);
          assert.ok(over.scroll <= over.inner, `page ${over.scroll} px wide in a ${over.inner} px window`);
          const canvas = await p.locator('#lm-heatmap').boundingBox();
          assert.ok(canvas.x >= 0 && canvas.x + canvas.width <= width, 'the map fits the window');
          await p.locator('#lm-card').screenshot({ path: join(outDir, `screenshot-lm-${width}.png`) });
          assert.deepEqual(errors, []);
        } finally {
          await ctx.close();
        }
      });
    }
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
    ['attnlite.mjs', /javascript/],
    ['attnlite.wasm', /application\/wasm/]]) {
    const r = await fetch(base + path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers.get('content-type'), type, path);
  }
  const m = await fetch(`${base}models/transformer-d2l.safetensors`);
  assert.equal(m.status, 200);
  assert.ok(Buffer.from(await m.arrayBuffer()).equals(readFileSync(join(root, 'models', 'transformer-d2l.safetensors'))));
});
