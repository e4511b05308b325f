// Loading and offline, in headless Chromium (playwright-core): on a slow network the first
// model downloads while the module compiles, with a progress bar and the bytes so far in the
// status line; the service worker caches the page, the module and the translators on the
// first visit (the default, sub-word one among them), so that a reload with the server gone
// translates; the whole-corpus word model (`later` in web/app.js), the language model are
// not fetched on the first visit but cached when first used, and then work offline too; a
// new sw.js (another build) replaces the cache; the manifest makes the page installable; at
// 390 px wide (a phone) the page is no wider than the screen after the default model's long
// sentence with all heads, and a question keeps its "?" on the line of the word before it.
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; skipped without one unless
// ATTNLITE_REQUIRE_BROWSER=1.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { root } from './common.mjs';
import { FLAGS, chromiumPath, haveBrowser, outDir } from './browser-common.mjs';
import { serve } from './serve.mjs';

// The page's default translator (web/app.js DEFAULT_MODEL: sub-words, cased, 8.1 MB) and the
// whole-corpus word model (4.9 MB), which the service worker caches only once it is used.
const DEFAULT = 'transformer-fra-bpe';
const WHOLE = 'transformer-fra';
// Served without both: the book's Transformer (254 KB) is then the first model.
const SMALL = { [`/models/${DEFAULT}.safetensors`]: null, [`/models/${WHOLE}.safetensors`]: null };

describe('loading and offline, in Chromium', { skip: !haveBrowser && `no browser at ${chromiumPath}` }, () => {
  let browser;

  before(async () => {
    mkdirSync(outDir, { recursive: true });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
  });

  after(async () => {
    await browser?.close();
  });

  test('slow network: module and model in parallel, a progress bar with the bytes', async () => {
    // Without the whole-corpus models: the book's Transformer (254 KB) is the first one.
    const { server, url } = await serve(join(root, 'web'), 0, { files: SMALL });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Network.enable');
      // 1.5 Mbit/s: the runtime module (340 KB) takes about 2 s, the figure renderer (100 KB)
      // 0.6 s, the model about 1.4 s.
      await cdp.send('Network.emulateNetworkConditions',
        { offline: false, latency: 40, downloadThroughput: 1.5e6 / 8, uploadThroughput: 1e6 / 8 });
      const seen = { status: [], progress: [] };
      await page.exposeFunction('attnliteSaw', (what, v) => seen[what].push(v));
      await page.addInitScript(() => {
        addEventListener('DOMContentLoaded', () => {
          const info = document.getElementById('model-info'), bar = document.getElementById('model-progress');
          new MutationObserver(() => window.attnliteSaw('status', info.textContent))
            .observe(info, { childList: true, characterData: true, subtree: true });
          new MutationObserver(() => !bar.hidden && window.attnliteSaw('progress', [bar.value, bar.max]))
            .observe(bar, { attributes: true });
        });
      });
      const times = {};
      page.on('request', (r) => { times[`start ${new URL(r.url()).pathname}`] ??= Date.now(); });
      page.on('requestfinished', (r) => { times[`end ${new URL(r.url()).pathname}`] = Date.now(); });
      await page.goto(url);
      await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 60000 });
      assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
      const size = statSync(join(root, 'models', 'transformer-d2l.safetensors')).size;
      // The bar and the status line count the figure renderer's bytes with the first model's.
      const figures = statSync(join(root, 'web', 'attnlite-figures.wasm')).size, total = size + figures;
      const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
      // The model's download began before the module's had ended.
      assert.ok(times['start /models/transformer-d2l.safetensors'] < times['end /attnlite.wasm'],
        `model requested ${times['start /models/transformer-d2l.safetensors'] - times['end /attnlite.wasm']} ms after the module arrived`);
      const steps = seen.status.filter((s) => s.startsWith('Downloading transformer-d2l: '));
      assert.ok(steps.length >= 2, `progress in the status line: ${JSON.stringify(seen.status)}`);
      assert.equal(steps.at(-1), `Downloading transformer-d2l: ${mb(total)} of ${mb(total)}…`);
      assert.ok(seen.progress.some(([v, max]) => max === total && v > 0 && v < total), 'the bar part way');
      // Before the model's download begins, the bar may show the renderer's bytes alone.
      assert.ok(seen.progress.every(([, max], i) => i === 0 || max === total || max === figures || max === 1),
        JSON.stringify(seen.progress));
      assert.equal(await page.isHidden('#model-progress'), true, 'the bar goes when the model is in');
      assert.match(await page.textContent('#model-info'), /^transformer-d2l: Transformer/);
    } finally {
      await ctx.close();
      server.close();
    }
  });

  test('offline after the first visit: the default cached, the word model once used; reload, translate, generate', async () => {
    const { server, url } = await serve(join(root, 'web'));
    // What reaches the server (the page's requests and the service worker's).
    const got = [];
    server.on('request', (req) => got.push(`${req.method} ${new URL(req.url, url).pathname}`));
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    let serverUp = true;
    const cachedUrls = () => page.evaluate(async () => {
      const keys = await caches.keys();
      const c = await caches.open(keys[0]);
      return { keys, urls: (await c.keys()).map((r) => new URL(r.url).pathname).sort() };
    });
    const translations = () => page.evaluate(() => Number(document.body.dataset.translations));
    const choose = async (name) => {
      const n = await translations();
      await page.selectOption('#model', name);
      await page.waitForFunction((k) => Number(document.body.dataset.translations) > k, n, { timeout: 30000 });
    };
    try {
      await page.goto(url);
      await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
      // The default translator: the sub-word model, the book's sentence as written.
      assert.equal(await page.inputValue('#model'), DEFAULT);
      assert.equal(await page.textContent('#output-text'), 'Je suis chez moi.');
      // The service worker has installed (the shell and the translators cached) and took over.
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30000 });
      const cached = await cachedUrls();
      assert.equal(cached.keys.length, 1);
      assert.match(cached.keys[0], /^attnlite-[0-9a-f]{16}$/);
      for (const f of ['/', '/index.html', '/app.js', '/attnlite.wasm', '/attnlite-api.mjs', '/api/core.mjs',
        '/attnlite-figures.mjs', '/attnlite-figures.wasm', '/api/figures.mjs', '/translate-worker.js',
        '/manifest.webmanifest', `/models/${DEFAULT}.safetensors`, '/models/transformer-d2l.safetensors',
        '/models/bahdanau-d2l.safetensors'])
        assert.ok(cached.urls.includes(f), `${f} cached: ${cached.urls.join(' ')}`);
      // The word model is listed (a HEAD request) but neither fetched nor cached on the first visit.
      assert.ok(!cached.urls.includes(`/models/${WHOLE}.safetensors`), 'the word model only when used');
      assert.ok(!got.includes(`GET /models/${WHOLE}.safetensors`), `the word model fetched on the first visit: ${got.join(', ')}`);
      assert.ok(got.includes(`HEAD /models/${WHOLE}.safetensors`));
      assert.ok(!cached.urls.includes('/models/lm-fra.safetensors'), 'the language model only when used');
      // Use the word model once, online: fetched once, cached then. It reads the book's
      // sentence lowercased (the sentence box follows).
      await choose(WHOLE);
      assert.equal(await page.inputValue('#sentence'), "i'm home .");
      assert.equal(await page.textContent('#output-text'), 'je suis chez moi .');
      assert.equal(got.filter((r) => r === `GET /models/${WHOLE}.safetensors`).length, 1);
      assert.ok((await cachedUrls()).urls.includes(`/models/${WHOLE}.safetensors`), 'the word model cached once used');
      // Use the language model once, online: it is cached then.
      await page.click('#lm-generate');
      await page.waitForFunction(() => document.body.dataset.lmGenerations === '1', null, { timeout: 60000 });
      const generated = await page.textContent('#lm-text');
      // The network goes: the server stops and the browser is offline.
      await new Promise((r) => server.close(r));
      server.closeAllConnections?.();
      serverUp = false;
      await ctx.setOffline(true);
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
      // The default again, from the cache.
      assert.equal(await page.inputValue('#model'), DEFAULT);
      assert.equal(await page.textContent('#output-text'), 'Je suis chez moi.');
      await page.fill('#sentence', "He's calm.");
      await page.click('#translate');
      await page.waitForFunction(() => document.body.dataset.translations === '2');
      assert.equal(await page.textContent('#output-text'), 'Il est calme.');
      // The word model, used once online, translates offline too.
      assert.equal(await page.locator(`#model option[value=${WHOLE}]`).isDisabled(), false);
      await choose(WHOLE);
      assert.equal(await page.inputValue('#sentence'), "he's calm .");
      assert.equal(await page.textContent('#output-text'), 'il est calme .');
      await page.click('#lm-generate');
      await page.waitForFunction(() => document.body.dataset.lmGenerations === '1', null, { timeout: 60000 });
      assert.equal(await page.textContent('#lm-text'), generated, 'the language model from the cache, same text');
      assert.equal(await page.isHidden('#error'), true);
      assert.deepEqual(errors, []);
    } finally {
      await ctx.close();
      if (serverUp) server.close();
    }
  });

  test('a new sw.js (another build) replaces the cache', async () => {
    const sw = readFileSync(join(root, 'web', 'sw.js'), 'utf8');
    const next = join(outDir, 'sw-next.js');
    writeFileSync(next, sw.replace(/const VERSION = '[0-9a-f]{16}';/, "const VERSION = '00000000deadbeef';"));
    const files = { ...SMALL };
    const { server, url } = await serve(join(root, 'web'), 0, { files });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      await page.goto(url);
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30000 });
      const first = await page.evaluate(() => caches.keys());
      files['/sw.js'] = next;  // the server now has the next build's service worker
      await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
      // The new worker installs into its own cache and, taking over, deletes the old one.
      for (let i = 0; i < 150 && (await page.evaluate(() => caches.keys())).join() !== 'attnlite-00000000deadbeef'; ++i)
        await page.waitForTimeout(200);
      await page.reload();
      await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
      assert.equal(first.length, 1);
      assert.notEqual(first[0], 'attnlite-00000000deadbeef');
      assert.deepEqual(await page.evaluate(() => caches.keys()), ['attnlite-00000000deadbeef']);
    } finally {
      await ctx.close();
      server.close();
    }
  });

  test('the manifest: name, start URL, standalone, an icon', async () => {
    const m = JSON.parse(readFileSync(join(root, 'web', 'manifest.webmanifest'), 'utf8'));
    assert.equal(m.short_name, 'attnlite');
    assert.equal(m.start_url, './');
    assert.equal(m.display, 'standalone');
    assert.ok(m.icons.some((i) => i.src === 'icon.svg' && i.type === 'image/svg+xml'));
    const { server, url } = await serve(join(root, 'web'));
    const page = await browser.newPage();
    try {
      await page.goto(url);
      assert.equal(await page.getAttribute('link[rel=manifest]', 'href'), 'manifest.webmanifest');
      const r = await page.evaluate(async () => {
        const res = await fetch('manifest.webmanifest');
        const icon = await fetch('icon.svg');
        return { type: res.headers.get('content-type'), ok: res.ok, icon: icon.ok, svg: (await icon.text()).startsWith('<svg') };
      });
      assert.deepEqual(r, { type: 'application/manifest+json', ok: true, icon: true, svg: true });
    } finally {
      await page.close();
      server.close();
    }
  });

  test('390 px wide: no wider than the screen after a long sentence with all heads', async () => {
    const { server, url } = await serve(join(root, 'web'));
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
    const page = await ctx.newPage();
    try {
      await page.goto(url);
      await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
      // The default translator: 3 layers of 4 heads, pieces (with their '_') for labels.
      assert.equal(await page.inputValue('#model'), DEFAULT);
      await page.fill('#sentence', "I'm home, he's calm, I lost, we are at home, they are calm and she is happy.");
      await page.click('#translate');
      await page.waitForFunction(() => document.body.dataset.translations === '2');
      assert.equal(await page.textContent('#output-text'), 'Je suis chez moi, et moi sommes heureuses.');
      // 22 source pieces ("I'm_ home_ ,_ he's_ ...", each with its '_'), 10 French pieces.
      const r = await page.evaluate(() => window.attnlitePage.result());
      assert.deepEqual([r.subword, r.srcWords.length, r.tokens.length], [true, 22, 10]);
      await page.check('#all-heads');
      for (const kind of ['enc', 'dec', 'cross']) {
        await page.click(`#attn-kind [data-kind=${kind}]`);
        assert.equal(await page.evaluate(() => window.attnlitePage.figure().layout.panels.length), 12);
        const w = await page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));
        assert.ok(w <= 390, `${kind}: the page is ${w} px wide`);
        // The grid scrolls inside its card instead.
        const box = await page.evaluate(() => {
          const s = document.getElementById('heatmap-scroll');
          return { client: s.clientWidth, scroll: s.scrollWidth };
        });
        assert.ok(box.client <= 390 && box.scroll > box.client, `the ${kind} grid scrolls in its card`);
      }
      await page.screenshot({ path: join(outDir, 'screenshot-all-heads-390.png'), fullPage: true });
      // A question: its "?" (after a space, as the corpus writes French) stays on the line of
      // the word before it instead of wrapping alone onto the next line.
      await page.fill('#sentence', 'Where is the station?');
      await page.click('#translate');
      await page.waitForFunction(() => document.body.dataset.translations === '3');
      assert.equal(await page.textContent('#output-text'), 'Où se trouve la gare ?');
      const q = await page.evaluate(() => {
        const el = document.getElementById('output-text');
        const glued = el.querySelector('.nowrap');
        const lines = (node) => new Set([...(() => { const r = document.createRange(); r.selectNodeContents(node); return r.getClientRects(); })()].map((x) => Math.round(x.top))).size;
        return { glued: glued?.textContent, gluedLines: glued ? lines(glued) : 0, lines: lines(el) };
      });
      assert.equal(q.glued, 'gare ?');
      assert.equal(q.gluedLines, 1, '"gare ?" on one line');
      await page.screenshot({ path: join(outDir, 'screenshot-question-390.png') });
    } finally {
      await ctx.close();
      server.close();
    }
  });
});
