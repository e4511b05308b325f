// The translation section by keyboard, for screen readers, and where a new user trips, in
// headless Chromium (playwright-core): a keyboard-only path from typing a sentence to reading
// a weight (Tab, Enter, arrow keys between the attention tabs and across the map's cells);
// the table view of the current map; every control named; the translation announced and
// marked French; errors under the sentence with the stale result cleared; the selector always
// showing the model that translates (own files too, never twice); a PNG given as a model
// named as such; the downloaded PNG the CLI's figure (model, sentence and layer labels);
// a page script that cannot be fetched said so.
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; skipped without one unless
// ATTNLITE_REQUIRE_BROWSER=1.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { root } from './common.mjs';
import { FLAGS, assertSameFigure, chromiumPath, cliFigureOfPage, haveBrowser, outDir, outFile } from './browser-common.mjs';
import { serve } from './serve.mjs';


describe('the translation section by keyboard and for a new user, in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, server, url, page, errors;

  before(async () => {
    mkdirSync(outDir, { recursive: true });
    // The page as shipped: it opens on its default translator, the sub-word model (cased
    // English, pieces on the maps), as a new user finds it.
    ({ server, url } = await serve(join(root, 'web')));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  const translations = () => page.evaluate(() => Number(document.body.dataset.translations));
  const active = () => page.evaluate(() => {
    const e = document.activeElement;
    if (!e) return '';
    return e.id || (e.dataset.kind ? `tab:${e.dataset.kind}` : `${e.tagName.toLowerCase()}:${e.textContent.trim().slice(0, 20)}`);
  });
  // Presses Tab until the focus is on an element matching pred (at most 40 presses).
  async function tabTo(pred) {
    for (let i = 0; i < 40; ++i) {
      await page.keyboard.press('Tab');
      if (pred(await active())) return;
    }
    assert.fail(`Tab never reached it (last: ${await active()})`);
  }

  test('keyboard only: type, translate, pick a tab, read a weight', async () => {
    await page.evaluate(() => document.activeElement?.blur());
    await tabTo((id) => id === 'sentence');
    await page.keyboard.press('Control+A');
    assert.equal(await page.inputValue('#model'), 'transformer-fra-bpe');
    await page.keyboard.type("He's calm.");
    const n = await translations();
    await page.keyboard.press('Enter');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.equal(await page.textContent('#output-text'), 'Il est calme.');
    // The tabs are one tab stop (the selected one); the arrows move and select.
    await tabTo((id) => id.startsWith('tab:'));
    assert.equal(await active(), 'tab:cross');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await active(), 'tab:dec');
    assert.equal(await page.getAttribute('#attn-kind [data-kind=dec]', 'aria-selected'), 'true');
    assert.equal(await page.getAttribute('#heatmap', 'data-kind'), 'dec');
    await page.keyboard.press('End');
    assert.equal(await active(), 'tab:cross');
    await page.keyboard.press('ArrowRight');  // wraps around
    assert.equal(await active(), 'tab:enc');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.getAttribute('#heatmap', 'data-kind'), 'cross');
    // The map: focus shows the first cell; arrows move and read.
    await tabTo((id) => id === 'heatmap');
    assert.equal(await page.isVisible('#cell-focus'), true);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const read = await page.evaluate(() => {
      const f = window.attnlitePage.figure(), r = window.attnlitePage.result();
      const w = r.attention.cross[0][0][1 * r.S + 1];
      const box = document.getElementById('cell-focus').getBoundingClientRect();
      const c = document.getElementById('heatmap').getBoundingClientRect();
      const cell = f.layout.cell(0, 0, 1, 1);
      return { text: document.getElementById('hover').textContent, w, q: f.qLabels[1], k: f.kLabels[1], nq: f.q, nk: f.k,
        box: [box.left - c.left, box.top - c.top, box.width, box.height], cell: [cell.x / f.s, cell.y / f.s, cell.w / f.s, cell.h / f.s] };
    });
    // The sub-word model's pieces: "He's_ calm_ ._" read, "Il_ est_ calme_ ._" predicted.
    assert.equal(read.q, 'est_');
    assert.equal(read.k, 'calm_');
    assert.equal(read.text, `layer 1, head 1: est_ → calm_  ${read.w.toFixed(4)} (query 2 of ${read.nq}, key 2 of ${read.nk})`);
    // The frame sits on the cell (1 px outside it on every side).
    const [bx, by, bw, bh] = read.box, [cx, cy, cw, ch] = read.cell;
    assert.ok(Math.abs(bx - (cx - 1)) <= 1 && Math.abs(by - (cy - 1)) <= 1, `frame at ${bx},${by}, cell at ${cx},${cy}`);
    assert.ok(Math.abs(bw - (cw + 2)) <= 1 && Math.abs(bh - (ch + 2)) <= 1);
    assert.equal(await page.getAttribute('#hover', 'aria-live'), 'polite');
    // Home, End, PageDown within the panel.
    await page.keyboard.press('End');
    await page.keyboard.press('PageDown');
    assert.match(await page.textContent('#hover'), new RegExp(`\\(query ${read.nq} of ${read.nq}, key ${read.nk} of ${read.nk}\\)$`));
    assert.deepEqual(errors, []);
  });

  test('all heads: the arrows cross from panel to panel', async () => {
    await page.check('#all-heads');
    await page.focus('#heatmap');
    const f = await page.evaluate(() => ({ q: window.attnlitePage.figure().q, k: window.attnlitePage.figure().k }));
    await page.keyboard.press('PageUp');
    await page.keyboard.press('Home');
    for (let i = 0; i < f.k; ++i) await page.keyboard.press('ArrowRight');  // past the last key: head 2
    assert.match(await page.textContent('#hover'), /^layer 1, head 2: .* \(query 1 of \d+, key 1 of \d+\)$/);
    for (let i = 0; i < f.q; ++i) await page.keyboard.press('ArrowDown');  // past the last query: layer 2
    assert.match(await page.textContent('#hover'), /^layer 2, head 2: .* \(query 1 of \d+, key 1 of \d+\)$/);
    await page.uncheck('#all-heads');
  });

  test('the table view lists the weights of the map', async () => {
    // The table of the current map, checked against the figure; closed again.
    async function table(caption, qLabels, kLabels) {
      await page.click('#table-view');
      assert.equal(await page.getAttribute('#table-view', 'aria-pressed'), 'true');
      const t = await page.evaluate(() => {
        const f = window.attnlitePage.figure();
        const rows = [...document.querySelectorAll('#weights-table-box tbody tr')];
        return {
          caption: document.querySelector('#weights-table-box caption').textContent,
          head: [...document.querySelectorAll('#weights-table-box thead th')].map((th) => th.textContent),
          rows: rows.map((tr) => [...tr.children].map((c) => c.textContent)),
          bold: rows.map((tr) => [...tr.querySelectorAll('td')].findIndex((td) => td.className === 'max')),
          mats: Array.from(f.mats), q: f.q, k: f.k, qLabels: f.qLabels, kLabels: f.kLabels,
        };
      });
      assert.equal(t.caption, caption);
      assert.deepEqual([t.qLabels, t.kLabels], [qLabels, kLabels]);
      assert.deepEqual(t.head, ['', ...t.kLabels]);
      assert.equal(t.rows.length, t.q);
      t.rows.forEach((row, q) => {
        assert.equal(row[0], t.qLabels[q]);
        const w = t.mats.slice(q * t.k, (q + 1) * t.k);
        assert.deepEqual(row.slice(1), w.map((x) => x.toFixed(3)));
        assert.equal(t.bold[q], w.indexOf(Math.max(...w)));
      });
      await page.click('#table-view');
      assert.equal(await page.isHidden('#weights-table-box'), true);
    }
    // The sub-word model's map: its pieces on both axes.
    await table('Layer 1, head 1: predicted pieces (rows) attending to source pieces (columns)',
      ['Il_', 'est_', 'calme_', '._', '<eos>'], ["He's_", 'calm_', '._', '<eos>']);
    // A word model's: its words (the sentence box takes the book's sentence as it reads it).
    const n = await translations();
    await page.selectOption('#model', 'transformer-d2l');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.equal(await page.inputValue('#sentence'), "he's calm .");
    assert.equal(await page.textContent('#output-text'), 'il est calme .');
    await table('Layer 1, head 1: predicted tokens (rows) attending to source tokens (columns)',
      ['il', 'est', 'calme', '.', '<eos>'], ["he's", 'calm', '.', '<eos>']);
    const m = await translations();
    await page.selectOption('#model', 'transformer-fra-bpe');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, m);
    assert.equal(await page.inputValue('#sentence'), "He's calm.");
  });

  test('every control has a name; the translation is announced, in French', async () => {
    const unnamed = await page.evaluate(() => [...document.querySelectorAll('input, select, button, textarea, canvas[tabindex]')]
      .filter((e) => e.type !== 'hidden')
      .filter((e) => {
        const label = e.getAttribute('aria-label') || (e.getAttribute('aria-labelledby') || '').split(' ')
          .map((id) => document.getElementById(id)?.textContent ?? '').join('') ||
          [...(e.labels ?? [])].map((l) => l.textContent).join('') || (e.tagName === 'BUTTON' ? e.textContent : '') ||
          e.getAttribute('title') || '';
        return !label.trim();
      }).map((e) => e.id || e.outerHTML.slice(0, 60)));
    assert.deepEqual(unnamed, []);
    assert.equal(await page.getAttribute('#nw-width', 'aria-label'), 'Kernel width w (log scale)');
    assert.equal(await page.getAttribute('#output-text', 'lang'), 'fr');
    assert.equal(await page.evaluate(() => document.getElementById('output-text').closest('[aria-live]')?.getAttribute('aria-live')), 'polite');
  });

  test('an error shows under the sentence and clears the result it contradicts', async () => {
    assert.equal(await page.evaluate(() => document.getElementById('error').closest('section')?.id), 'translate-card');
    await page.fill('#sentence', '   ');
    await page.click('#translate');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.textContent('#error'), /input is empty/);
    assert.equal(await page.isHidden('#result'), true);
    assert.equal(await page.isHidden('#attention-card'), true);
    const n = await translations();
    await page.fill('#sentence', "I'm home.");
    await page.click('#translate');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.equal(await page.isHidden('#error'), true);
    assert.equal(await page.isVisible('#result'), true);
    assert.equal(await page.isVisible('#attention-card'), true);
  });

  test('the selector shows the model that translates: own files once, chosen again, failures', async () => {
    const good = readFileSync(join(root, 'models', 'transformer-d2l.safetensors'));
    const give = async (name, buffer) => {
      const n = await translations();
      await page.setInputFiles('#model-file', { name, mimeType: 'application/octet-stream', buffer });
      return n;
    };
    const n0 = await give('mine.safetensors', good);
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n0);
    const n1 = await give('mine.safetensors', good);  // the same file again
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n1);
    assert.equal(await page.locator('#model option[value="file:mine.safetensors"]').count(), 1, 'one entry per file');
    assert.equal(await page.inputValue('#model'), 'file:mine.safetensors');
    // The Bahdanau model, then the own file again: it translates, not the Bahdanau model.
    let n = await translations();
    await page.selectOption('#model', 'bahdanau-d2l');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.match(await page.textContent('#model-info'), /^bahdanau-d2l: Bahdanau GRU/);
    assert.doesNotMatch(await page.textContent('#result-info'), /positions/, 'no positions line for a GRU');
    n = await translations();
    await page.selectOption('#model', 'file:mine.safetensors');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    assert.match(await page.textContent('#model-info'), /^mine\.safetensors: Transformer/);
    assert.match(await page.textContent('#result-info'), /positions: step t at step t/);
    // A PNG renamed .safetensors: named as a PNG; the selector still shows the model in use.
    await page.setInputFiles('#model-file', { name: 'digit.safetensors', mimeType: 'application/octet-stream',
      buffer: readFileSync(join(root, 'tests', 'fixtures', 'digits', 'idx0006_label6_8x8.png')) });
    await page.waitForFunction(() => !document.getElementById('error').hidden);
    assert.equal(await page.textContent('#error'),
      'Could not load digit.safetensors: invalid safetensors file: this looks like a PNG image, not a safetensors model file');
    assert.equal(await page.inputValue('#model'), 'file:mine.safetensors');
    assert.equal(await page.locator('#model option[value="file:digit.safetensors"]').count(), 0);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
    assert.deepEqual(errors, []);
  });

  test('Download PNG: the figure with the model, the sentence and the layer labels', async () => {
    const n = await translations();
    await page.selectOption('#model', 'transformer-d2l');
    await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n);
    await page.check('#all-heads');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.equal(download.suggestedFilename(), 'attnlite-transformer-d2l-cross-all.png');
    const file = outFile(download.suggestedFilename());
    await download.saveAs(file);
    const { PNG } = await import('pngjs');
    const png = PNG.sync.read(readFileSync(file));
    // The CLI's figure of the same translation: titled with the model, the attention kind,
    // the sentence and its translation, "Layer n" left of each row and "Head n" above each
    // column (the native tests check those texts' places; here the pixels are the CLI's).
    assertSameFigure(png, await cliFigureOfPage(page));
    // The title's band holds dark text across the top, the layer labels' band left of the
    // panels too.
    const dark = (x0, y0, x1, y1) => {
      let n = 0;
      for (let y = y0; y < y1; ++y) for (let x = x0; x < x1; ++x) {
        const i = (y * png.width + x) * 4;
        if (png.data[i] < 100 && png.data[i + 1] < 100 && png.data[i + 2] < 100) n += 1;
      }
      return n;
    };
    assert.ok(dark(0, 0, png.width, 20) > 100, 'the title');
    assert.ok(dark(0, 40, 50, png.height - 40) > 100, 'the layer labels');
    await page.uncheck('#all-heads');
  });

  test('a page script that cannot be fetched is an error on the page, not "Loading…" forever', async () => {
    const alt = await serve(join(root, 'web'), 0, { files: { '/translation-view.js': null } });
    const p = await browser.newPage();
    try {
      await p.goto(alt.url);
      await p.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 15000 });
      assert.match(await p.textContent('#error'), /scripts could not be loaded/);
      assert.equal(await p.textContent('#model-info'), 'Nothing loaded.');
    } finally {
      await p.close();
      alt.server.close();
    }
  });
});
