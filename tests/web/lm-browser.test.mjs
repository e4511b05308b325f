// The page's language model section in headless Chromium (playwright-core): the model is
// downloaded lazily on the first Generate, words appear one by one and the causal map grows,
// layer, head and all heads redraw, sampling with a seed gives the native CLI's text, options
// and their inline errors, Stop, a language-model file given to "Load your own model", and at
// 1280 and 390 px nothing sticks out (screenshots: build/web-test/screenshot-lm-*.png). The
// page's other sections: browser.test.mjs. Chromium and the page's setup: browser-common.mjs
// (without a browser the test is skipped, unless ATTNLITE_REQUIRE_BROWSER=1, as tools/test.sh
// sets).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { chromiumPath, haveBrowser, lum, openPage, outDir, translateOn } from './browser-common.mjs';
import { root } from './common.mjs';

describe('the page in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, page, server, url, pageErrors, requests;

  before(async () => {
    ({ browser, page, server, url, pageErrors, requests } = await openPage());
  });

  after(async () => {
    try {
      // No script errors in the whole run, as browser.test.mjs checks for its own page.
      if (page) assert.deepEqual(pageErrors, []);
    } finally {
      await browser?.close();
      server?.close();
    }
  });

  const translate = (sentence) => translateOn(page, sentence);

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
});
