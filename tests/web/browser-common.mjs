// Shared by the tests of the page in headless Chromium (tests/web/*browser.test.mjs):
// the browser, its flags, the screenshot folder, and the page as both files open it.
// Chromium: /usr/bin/chromium or ATTNLITE_CHROMIUM; without one the tests are skipped, unless
// ATTNLITE_REQUIRE_BROWSER=1 (as tools/test.sh sets).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import assert from 'node:assert/strict';

import { figureDiff, nativeCli, root } from './common.mjs';
import { serve } from './serve.mjs';

export const chromiumPath = process.env.ATTNLITE_CHROMIUM ?? '/usr/bin/chromium';
export const haveBrowser = existsSync(chromiumPath);
if (!haveBrowser && process.env.ATTNLITE_REQUIRE_BROWSER === '1')
  throw new Error(`${chromiumPath} is missing (apt-get install chromium)`);
export const outDir = join(root, 'build', 'web-test');
// A file that two test files could both write (a download, the CLI's figure) is named after
// the test file that writes it (node --test runs each file as its own process), so that files
// run side by side (node --test's default) never write one file. tools/test.sh runs them one
// at a time: two at a time took 123 s against ~130 s here, the browsers sharing two cores.
const fileTag = basename(process.argv[1] ?? 'web', '.test.mjs');
export const outFile = (name) => join(outDir, `${fileTag}-${name}`);
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// The native CLI's `attnlite heatmap translate` figure of the page's current translation and
// view (the shipped model file of that name), decoded: what the page's Download PNG should save.
export async function cliFigureOfPage(page) {
  const p = await page.evaluate(() => {
    const r = window.attnlitePage.result(), v = window.attnlitePage.view(), t = window.attnlitePage.translator();
    return { sentence: r.sentence, d2l: r.positions === 'd2l', beam: r.beam, alpha: r.alpha, kind: v.kind,
      all: v.all, layer: v.layer, head: v.head, cmap: v.cmap, model: document.getElementById('model').value,
      transformer: t.model.kind === 'transformer' };
  });
  const out = outFile(`cli-${p.model}-${p.kind}.png`);
  const args = ['heatmap', 'translate', '--model', join(root, 'models', `${p.model}.safetensors`), p.sentence,
    '--kind', { enc: 'enc', dec: 'dec-self', cross: 'cross' }[p.kind], '--cmap', p.cmap, '--out', out];
  if (p.transformer && !p.all) args.push('--layer', String(p.layer + 1), '--head', String(p.head + 1));
  if (p.d2l) args.push('--d2l-compat');
  if (p.beam > 1) args.push('--beam', String(p.beam), '--alpha', String(p.alpha));
  const run = spawnSync(nativeCli, args, { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { PNG } = await import('pngjs');
  return PNG.sync.read(readFileSync(out));
}

// Two decoded PNGs of one figure: the same size and pixels, but for a few pixels a colour
// step apart where the two builds round a weight differently (tests/web/figures.test.mjs
// checks that such pixels lie inside cells).
export function assertSameFigure(png, expected) {
  assert.deepEqual([png.width, png.height], [expected.width, expected.height], 'the same size');
  const { outside: differ, maxOutside: max } = figureDiff(png, expected);
  assert.ok(max <= 3 && differ <= 0.02 * png.width * png.height, `${differ} pixels differ, by up to ${max} levels`);
}

export const lum = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;

// Serves web/, launches Chromium and opens the page at 1200 x 900. The page loads the first
// shipped model and translates the default sentence (firstModel: the model it chose; first:
// what it showed then: the sentence, the French, the status line, the example chips); then
// the book's Transformer is selected, which the tests are written for. pageErrors collects
// the page's script errors, requests every request it makes (the language model is fetched
// lazily). On a failure whatever was started is stopped again.
export async function openPage() {
  mkdirSync(outDir, { recursive: true });
  const { server, url } = await serve(join(root, 'web'));
  let browser;
  try {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const pageErrors = [];
    const requests = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => requests.push({ url: r.url(), method: r.method() }));
    await page.goto(url);
    // The page loads the first shipped model and translates the default sentence.
    await page.waitForFunction(() => document.body.dataset.translations === '1', null, { timeout: 30000 });
    const firstModel = await page.inputValue('#model');
    const first = await page.evaluate(() => ({
      sentence: document.getElementById('sentence').value, text: document.getElementById('output-text').textContent,
      info: document.getElementById('model-info').textContent,
      examples: [...document.querySelectorAll('#examples .chip')].map((b) => b.textContent),
    }));
    // The tests are written for the book's Transformer.
    if (firstModel !== 'transformer-d2l') {
      await page.selectOption('#model', 'transformer-d2l');
      await page.waitForFunction(() => document.body.dataset.translations === '2', null, { timeout: 30000 });
    }
    return { browser, page, server, url, firstModel, first, pageErrors, requests };
  } catch (e) {
    await browser?.close();
    server.close();
    throw e;
  }
}

// Translate and wait for the page to finish (a counter on <body> moves on, or an error shows).
export async function translateOn(page, sentence) {
  const before = await page.evaluate(() => Number(document.body.dataset.translations ?? 0));
  await page.fill('#sentence', sentence);
  await page.click('#translate');
  await page.waitForFunction((n) => Number(document.body.dataset.translations) > n || document.body.dataset.state === 'error',
    before, { timeout: 10000 });
}
