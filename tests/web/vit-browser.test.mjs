// The page's Vision Transformer section in headless Chromium (playwright-core): the model is
// fetched only on first use; a stroke drawn with the mouse and one drawn with a finger (touch
// events through the DevTools protocol, which the browser turns into pointer events) give a
// prediction, ten probability bars that sum to 1 and the attention overlays; a test digit
// picked from the chips gives its label and the fixture's 8x8 values; Clear empties it all;
// layer, head and all heads redraw; at 1280 px and 390 px (a phone) nothing is wider than the
// window. Screenshots: build/web-test/screenshot-vit-1280.png, screenshot-vit-390.png.
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; skipped without one unless
// ATTNLITE_REQUIRE_BROWSER=1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { nativeCli, root } from './common.mjs';
import { FLAGS, chromiumPath, haveBrowser, outDir } from './browser-common.mjs';
import { serve } from './serve.mjs';

const fixture = JSON.parse(readFileSync(join(root, 'tests', 'fixtures', 'vit_digits_test.json'), 'utf8'));

describe('the Vision Transformer section in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser, server, url;

  before(async () => {
    mkdirSync(outDir, { recursive: true });
    ({ server, url } = await serve(join(root, 'web')));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
  });

  after(async () => {
    await browser?.close();
    server?.close();
  });

  async function open(width, height, dpr = 1, touch = false) {
    const ctx = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, hasTouch: touch, isMobile: touch });
    const page = await ctx.newPage();
    const errors = [], requests = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await page.goto(url);
    await page.waitForFunction(() => window.attnlitePage?.vit && document.body.dataset.vitState === 'idle' &&
      document.getElementById('vit-info').textContent.includes('downloaded when'), null, { timeout: 30000 });
    return { ctx, page, errors, requests };
  }

  // Waits until the section has classified more than n times.
  const classified = (page, n) => page.waitForFunction((k) => window.attnlitePage.vit.classifications() > k, n, { timeout: 15000 });

  async function bars(page) {
    return page.$$eval('#vit-bars li', (lis) => lis.map((li) => ({
      k: li.querySelector('.k').textContent,
      width: parseFloat(li.querySelector('i').style.width),
      best: li.classList.contains('best'),
      text: li.querySelector('.p').textContent,
    })));
  }

  // A stroke through pad points (0..1 of the pad's side) with the mouse.
  async function mouseStroke(page, points) {
    await page.locator('#vit-draw').scrollIntoViewIfNeeded();
    const box = await page.locator('#vit-draw').boundingBox();
    const at = ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
    await page.mouse.move(...at(points[0]));
    await page.mouse.down();
    for (let i = 1; i < points.length; ++i) await page.mouse.move(...at(points[i]), { steps: 6 });
    await page.mouse.up();
  }

  test('a mouse stroke: the model is fetched then, and a 1 shows with its bars and attention', async () => {
    const { ctx, page, errors, requests } = await open(1200, 900);
    await page.waitForTimeout(300);
    assert.ok(!requests.includes('GET /models/vit-digits.safetensors'), 'not fetched before first use');
    assert.equal(await page.textContent('#vit-label'), '?');
    await mouseStroke(page, [[0.52, 0.15], [0.5, 0.5], [0.48, 0.85]]);  // a vertical line
    await classified(page, 0);
    await page.waitForFunction(() => window.attnlitePage.vit.result()?.name === document.getElementById('vit-label').textContent);
    assert.equal(requests.filter((r) => r === 'GET /models/vit-digits.safetensors').length, 1);
    const r = await page.evaluate(() => window.attnlitePage.vit.result());
    assert.equal(r.name, '1');
    assert.equal(await page.textContent('#vit-label'), '1');
    assert.match(await page.textContent('#vit-prob'), /\d+(\.\d)?% sure/);
    const b = await bars(page);
    assert.equal(b.length, 10);
    assert.deepEqual(b.map((x) => x.k), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    assert.deepEqual(b.filter((x) => x.best).map((x) => x.k), ['1']);
    assert.ok(Math.abs(b.reduce((s, x) => s + x.width, 0) - 100) < 0.5, 'bars add up to 100%');
    // The 8x8 input has ink; the attention shows the 4 heads of layer 1 and the rollout.
    const input = await page.evaluate(() => window.attnlitePage.vit.input());
    assert.ok(input.some((v) => v > 8));
    assert.equal(await page.isVisible('#vit-attn'), true);
    assert.deepEqual(await page.$$eval('#vit-figs figcaption b', (bs) => bs.map((x) => x.textContent)),
      ['Layer 1, head 1', 'Layer 1, head 2', 'Layer 1, head 3', 'Layer 1, head 4', 'Rollout, all layers']);
    // The rollout panel: its most attended patch is the most tinted one.
    const tint = await page.evaluate(() => {
      const ro = window.attnlitePage.vit.rollout().slice(1, 17);
      const c = [...document.querySelectorAll('#vit-figs canvas')].at(-1);
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const red = ro.map((_, i) => {
        const x = Math.floor(((i % 4) + 0.5) * c.width / 4), y = Math.floor((Math.floor(i / 4) + 0.5) * c.height / 4);
        const o = (y * c.width + x) * 4;
        return d[o] - (d[o + 1] + d[o + 2]) / 2;  // redness
      });
      const argmax = (a) => a.indexOf(Math.max(...a));
      return { ro: argmax(ro), red: argmax(red) };
    });
    assert.equal(tint.red, tint.ro);
    // The pad saved as a PNG reads the same in the native CLI (`attnlite classify`): the page and
    // the CLI share the preprocessing.
    if (existsSync(nativeCli)) {
      const png = await page.evaluate(() => document.getElementById('vit-draw').toDataURL('image/png'));
      const file = join(outDir, 'vit-pad.png');
      writeFileSync(file, Buffer.from(png.split(',')[1], 'base64'));
      const out = spawnSync(nativeCli, ['classify', file], { encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
      const [, label, prob] = out.stdout.trim().split('\t');
      assert.equal(label, r.name);
      assert.ok(Math.abs(Number(prob) - r.prob) < 2e-4, `CLI ${prob}, page ${r.prob}`);
    }
    // Hovering a patch of an overlay reads its weight.
    const fig = page.locator('#vit-figs canvas').first();
    await fig.scrollIntoViewIfNeeded();
    const fb = await fig.boundingBox();
    await page.mouse.move(fb.x + fb.width * 0.6, fb.y + fb.height * 0.1);
    assert.match(await page.textContent('#vit-hover'), /^Layer 1, head 1: patch \(1, 3\), rows 1–2, columns 5–6 of the 8×8 image: weight 0\.\d{3}$/);
    // Drawing on: more classifications, at most one per frame.
    const n = await page.evaluate(() => window.attnlitePage.vit.classifications());
    await mouseStroke(page, [[0.3, 0.2], [0.7, 0.2]]);
    await classified(page, n);
    // The 8x8 preview keeps its size over many classifications.
    assert.equal((await page.locator('#vit-input').boundingBox()).width, 96);
    // Layer and head selectors redraw.
    await page.selectOption('#vit-layer', '2');
    assert.equal(await page.textContent('#vit-figs figcaption b'), 'Layer 3, head 1');
    await page.uncheck('#vit-all-heads');
    await page.selectOption('#vit-head', '2');
    assert.deepEqual(await page.$$eval('#vit-figs figcaption b', (bs) => bs.map((x) => x.textContent)),
      ['Layer 3, head 3', 'Rollout, all layers']);
    // Clear: back to nothing.
    await page.click('#vit-clear');
    assert.equal(await page.textContent('#vit-label'), '?');
    assert.equal(await page.isVisible('#vit-attn'), false);
    assert.ok((await bars(page)).every((x) => x.width === 0));
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  test('every test digit chip gives its label and the fixture 8x8 values', async () => {
    const { ctx, page, errors } = await open(1200, 900);
    const chips = await page.$$eval('#vit-examples .digit-chip', (bs) => bs.map((b) => b.dataset.label));
    assert.deepEqual(chips, ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    for (const entry of fixture.png) {
      const n = await page.evaluate(() => window.attnlitePage.vit.classifications());
      await page.click(`#vit-examples .digit-chip[data-label="${entry.label}"]`);
      await classified(page, n);
      assert.equal(await page.textContent('#vit-label'), String(entry.label));
      assert.equal(await page.evaluate(() => window.attnlitePage.vit.source()), `test digit ${entry.label}`);
      const input = await page.evaluate(() => window.attnlitePage.vit.input());
      const want = fixture.images[entry.position].flat();
      input.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 0.05, `digit ${entry.label} [${i}]: ${v} vs ${want[i]}`));
      const r = await page.evaluate(() => window.attnlitePage.vit.result());
      assert.ok(Math.abs(r.prob - entry.probability) < 1e-3, `digit ${entry.label}: ${r.prob} vs ${entry.probability}`);
    }
    // Drawing after a picked digit starts a new drawing.
    const n = await page.evaluate(() => window.attnlitePage.vit.classifications());
    await mouseStroke(page, [[0.5, 0.2], [0.5, 0.8]]);
    await classified(page, n);
    assert.equal(await page.evaluate(() => window.attnlitePage.vit.source()), 'drawing');
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  for (const [width, height, dpr] of [[1280, 900, 1], [390, 844, 2]]) {
    test(`at ${width} px: a finger draws, nothing sticks out, screenshot`, async () => {
      const { ctx, page, errors } = await open(width, height, dpr, true);
      await page.locator('#vit-draw').scrollIntoViewIfNeeded();
      const box = await page.locator('#vit-draw').boundingBox();
      assert.ok(box.width >= 200 && box.width <= 300, `pad ${box.width} px wide`);
      const cdp = await ctx.newCDPSession(page);
      // a 7: the top bar, then down to the left
      const pts = [[0.25, 0.2], [0.5, 0.2], [0.75, 0.2], [0.65, 0.45], [0.55, 0.65], [0.45, 0.85]]
        .map(([x, y]) => ({ x: box.x + x * box.width, y: box.y + y * box.height }));
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [pts[0]] });
      for (let i = 1; i < pts.length; ++i) {
        for (let s = 1; s <= 5; ++s) {
          const t = s / 5, p = { x: pts[i - 1].x + t * (pts[i].x - pts[i - 1].x), y: pts[i - 1].y + t * (pts[i].y - pts[i - 1].y) };
          await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [p] });
        }
      }
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
      await classified(page, 0);
      await page.waitForFunction(() => document.getElementById('vit-label').textContent !== '?');
      assert.equal(await page.evaluate(() => window.attnlitePage.vit.result().name), '7');
      // All heads only where they fit: at 390 px one head and the rollout.
      const panels = await page.$$eval('#vit-figs figcaption b', (bs) => bs.map((x) => x.textContent));
      assert.equal(panels.length, width >= 900 ? 5 : 2);
      assert.equal(await page.isDisabled('#vit-all-heads'), width < 900);
      const wide = await page.evaluate(() => [...document.querySelectorAll('#vit-card *')]
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((el) => `${el.tagName}#${el.id}.${el.className}`));
      assert.deepEqual(wide, []);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
      await page.locator('#vit-card').screenshot({ path: join(outDir, `screenshot-vit-${width}.png`) });
      assert.deepEqual(errors, []);
      await ctx.close();
    });
  }
});
