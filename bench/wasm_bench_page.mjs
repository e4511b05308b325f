// Translation time of the default model (models/transformer-fra-bpe.safetensors: 3 + 3 layers,
// 256 hidden units, 4 heads, int8 linear weights, a byte-pair vocabulary of 8106 pieces shared
// by source and target, num_steps 32) in headless Chromium, the page's runtime: the committed
// web build (web/attnlite-api.mjs, web/api/, web/attnlite.{mjs,wasm}) against onnxruntime-web
// running the same weights in the same browser, and against the native CLI. Greedy and beam 4,
// over the English column (cased, as written) of the first lines of
// models/transformer-fra-bpe.test.tsv.
//
//   cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release   # the native CLI (if missing)
//   cmake --build build/native --target attnlite_cli -j2
//   /usr/bin/python3 tools/export_onnx.py --model models/transformer-fra-bpe.safetensors \
//       --out build/onnx/transformer-fra-bpe [--check]      # the ONNX graphs (fp32: the int8
//                                                           # weights dequantized)
//   node bench/wasm_bench_page.mjs [--lines 100] [--rounds 5] [--reps 3] [--skip native,onnx]
//
// Everything in the browser runs on the main thread of a blank page served from the repository
// (tests/web/serve.mjs; Chromium started with tests/web/browser-common.mjs's FLAGS), inside
// page.evaluate, timed with the page's performance.now().
// attnlite WASM in Chromium: Model.translate(sentence, { attention: false, beam }) with the
// build's default kernels (SIMD128); the median of --rounds passes over the sentences after one
// warm-up pass, divided by their number.
// onnxruntime-web (ort.wasm.min.mjs: the wasm backend, SIMD, numThreads 1, graph optimisation
// 'all'), greedy only: the batch-1 encoder and decoder-step graphs (KV cache) of
// tools/attnlite_tools/onnx_export.py (export_batch1; the loop of greedy_batch1 and
// bench/wasm_bench.mjs): the encoder once, then one decoder run per step with position t at
// step t, the argmax over the logits in JS, until <eos> or num_steps steps. The source ids
// (padded to num_steps with <pad>, valid_len = the ids up to and with <eos>) are attnlite's
// (result.srcIds, result.srcValid of the warm-up pass), made outside the timing. Same
// median-of-passes as attnlite's.
// Native: `attnlite translate [--beam 4]` over stdin with the sentences repeated --reps times,
// minus a one-line run (process start, model load), divided by the line count; the median of
// 5 such runs (the method of bench/wasm_bench_fra.mjs).
// Agreement: translations (text) identical between WASM and native; ORT's greedy token ids
// identical to attnlite WASM's (result.tokenIds, without <eos>).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { nativeCli, root } from '../tests/web/common.mjs';
import { cliTexts, median, perLine } from './native_cli.mjs';
import { FLAGS, chromiumPath } from '../tests/web/browser-common.mjs';
import { serve } from '../tests/web/serve.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const LINES = Number(opt('lines', 100));
const ROUNDS = Number(opt('rounds', 5));
const REPS = Number(opt('reps', 3));
const SKIP = (opt('skip', '') ?? '').split(',');
const NAME = 'transformer-fra-bpe';
const MODEL = join(root, 'models', `${NAME}.safetensors`);
const ONNX = join(root, 'build', 'onnx', NAME);  // -encoder.onnx, -decoder.onnx, .json

const loadBefore = loadavg();
const sentences = readFileSync(join(root, 'models', `${NAME}.test.tsv`), 'utf8')
  .split('\n').filter((l) => l.length > 0).slice(0, LINES).map((l) => l.split('\t')[0]);
const N = sentences.length;
const ms = (x) => (x === undefined ? '–' : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const modes = [{ name: 'greedy', beam: 1 }, { name: 'beam 4', beam: 4 }];

const result = { greedy: {}, 'beam 4': {} };  // result[mode][runtime] = ms per sentence
const texts = { greedy: {}, 'beam 4': {} };   // translations, to count agreement
let wasmGreedy = null;                        // attnlite WASM greedy results (ids)
let ortIds = null, ortVersion = '', kernels = '?';

// ---- the browser: a blank page of the repository's server ----
const { server, url } = await serve(root);
const { chromium } = await import('playwright-core');
const browser = await chromium.launch({ executablePath: chromiumPath, args: FLAGS });
const chromiumVersion = browser.version();
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.error(`page ${m.type()}: ${m.text()}`); });
  // A page of its own (no file in the repository): only this URL is answered by the route.
  const blank = `${url}__wasm_bench_page__.html`;
  await page.route(blank, (r) => r.fulfill({ contentType: 'text/html; charset=utf-8',
    body: '<!doctype html><meta charset="utf-8"><title>wasm_bench_page</title>' }));
  await page.goto(blank);

  // ---- attnlite WASM in Chromium ----
  const info = await page.evaluate(async ({ model, sentences }) => {
    const { Attnlite } = await import('/web/attnlite-api.mjs');
    const al = await Attnlite.create({ figures: false });
    const bytes = new Uint8Array(await (await fetch(model)).arrayBuffer());
    const m = al.loadModel(bytes);
    window.bench = { al, model: m, sentences };
    const v = m.vocab;
    return { backend: al.backend, numSteps: m.numSteps, bos: v.indexOf('<bos>'), eos: v.indexOf('<eos>'),
      pad: v.indexOf('<pad>') };
  }, { model: `/models/${NAME}.safetensors`, sentences });
  for (const m of modes) {
    const r = await page.evaluate(({ beam, rounds }) => {
      const { model, sentences } = window.bench;
      const run = () => sentences.map((s) => model.translate(s, { attention: false, beam }));
      const ref = run();  // warm-up
      const t = [];
      for (let i = 0; i < rounds; ++i) {
        const t0 = performance.now();
        run();
        t.push(performance.now() - t0);
      }
      return { t, texts: ref.map((x) => x.text), ids: ref.map((x) => Array.from(x.tokenIds)),
        srcIds: ref.map((x) => Array.from(x.srcIds)), srcValid: ref.map((x) => x.srcValid) };
    }, { beam: m.beam, rounds: ROUNDS });
    kernels = info.backend;
    result[m.name].wasm = median(r.t) / N;
    texts[m.name].wasm = r.texts;
    if (m.beam === 1) wasmGreedy = r;
    console.error(`attnlite WASM (${info.backend}) in Chromium, ${m.name}: ${ms(result[m.name].wasm)} ms / sentence`);
  }

  // ---- onnxruntime-web in the same page ----
  if (SKIP.includes('onnx')) {
    console.error('skipping onnxruntime-web (--skip)');
  } else if (!existsSync(`${ONNX}-encoder.onnx`) || !existsSync(`${ONNX}-decoder.onnx`) || !existsSync(`${ONNX}.json`)) {
    console.error(`skipping onnxruntime-web: ${ONNX}-{encoder,decoder}.onnx or .json is missing; make them with\n` +
      `  /usr/bin/python3 tools/export_onnx.py --model models/${NAME}.safetensors --out build/onnx/${NAME}`);
  } else {
    const S = info.numSteps;
    // Source ids as attnlite reads them: padded to num_steps with <pad>.
    const src = wasmGreedy.srcIds.map((ids, i) => {
      const p = ids.slice(0, S);
      while (p.length < S) p.push(info.pad);
      return { ids: p, valid: wasmGreedy.srcValid[i] };
    });
    const base = `/build/onnx/${NAME}`;
    ortVersion = await page.evaluate(async ({ base, src, bos, eos }) => {
      const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
      ort.env.wasm.wasmPaths = new URL('/node_modules/onnxruntime-web/dist/', location.href).href;
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.proxy = false;
      const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
      const meta = await (await fetch(`${base}.json`)).json();
      const so = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
      const enc = await ort.InferenceSession.create(await bytes(`${base}-encoder.onnx`), so);
      const dec = await ort.InferenceSession.create(await bytes(`${base}-decoder.onnx`), so);
      const { ortGreedy } = await import('/bench/ort_greedy.mjs');
      const translate = ortGreedy(ort, enc, dec, meta, bos, eos);
      window.bench.ort = { translate, src };
      return ort.env.versions?.web ?? '';
    }, { base, src, bos: info.bos, eos: info.eos });
    const r = await page.evaluate(async ({ rounds }) => {
      const { translate, src } = window.bench.ort;
      const run = async () => {
        const out = [];
        for (const s of src) out.push(await translate(s.ids, s.valid));
        return out;
      };
      const ids = await run();  // warm-up
      const t = [];
      for (let i = 0; i < rounds; ++i) {
        const t0 = performance.now();
        await run();
        t.push(performance.now() - t0);
      }
      return { t, ids };
    }, { rounds: ROUNDS });
    result.greedy.ort = median(r.t) / N;
    ortIds = r.ids;
    console.error(`onnxruntime-web ${ortVersion} in Chromium, greedy: ${ms(result.greedy.ort)} ms / sentence`);
  }
} finally {
  await browser.close();
  server.close();
}

// ---- attnlite native ----
if (SKIP.includes('native')) {
  console.error('skipping native (--skip)');
} else {
  if (!existsSync(nativeCli)) {
    console.error(`${nativeCli} is missing: building it`);
    for (const cmd of [['-S', '.', '-B', 'build/native', '-DCMAKE_BUILD_TYPE=Release'],
      ['--build', 'build/native', '--target', 'attnlite_cli', '-j2']]) {
      const p = spawnSync('cmake', cmd, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      if (p.status !== 0) throw new Error(`cmake ${cmd.join(' ')} failed`);
    }
  }
  for (const m of modes) {
    const all = Array.from({ length: REPS }, () => sentences).flat();
    result[m.name].native = perLine(MODEL, all, m.beam);
    texts[m.name].native = cliTexts(MODEL, sentences, m.beam);
    console.error(`native, ${m.name}: ${ms(result[m.name].native)} ms / sentence`);
  }
}

// ---- report (markdown) ----
const la = (l) => l.map((x) => x.toFixed(2)).join(', ');
console.log(`${N} sentences of models/${NAME}.test.tsv; Chromium ${chromiumVersion} (attnlite kernels: ${kernels}); node ${process.version}; ` +
  `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); load average ${la(loadBefore)} before, ${la(loadavg())} after\n`);
const ratio = (a, b) => (a && b ? (a / b).toFixed(2) : '–');
console.log('| decoding | attnlite WASM in Chromium (ms / sentence) | native CLI (ms / sentence) | ' +
  `onnxruntime-web${ortVersion ? ` ${ortVersion}` : ''} in Chromium (ms / sentence) | WASM / native | ORT-web / attnlite WASM |`);
console.log('|---|---:|---:|---:|---:|---:|');
for (const m of modes) {
  const r = result[m.name];
  console.log(`| ${m.name} | ${ms(r.wasm)} | ${ms(r.native)} | ${ms(r.ort)} | ${ratio(r.wasm, r.native)} | ${ratio(r.ort, r.wasm)} |`);
}
console.log('');
for (const m of modes) {
  const t = texts[m.name];
  if (!t.native) continue;
  const same = t.native.filter((x, i) => x === t.wasm[i]).length;
  console.log(`${m.name}: translations identical between attnlite WASM and native: ${same}/${N}`);
}
if (ortIds) {
  const same = ortIds.filter((ids, i) => ids.join(' ') === wasmGreedy.ids[i].join(' ')).length;
  console.log(`greedy: onnxruntime-web token sequences identical to attnlite WASM's: ${same}/${N}`);
}
