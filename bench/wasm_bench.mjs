// Translation latency of the attnlite WASM build against the native build and against
// onnxruntime-web (wasm, SIMD, one thread) running the same Transformer weights, all in
// one run on one machine. Greedy decoding everywhere; one sentence at a time.
//
//   wasm/build.sh node                      # build/wasm-node
//   cmake --build build/native --target attnlite_cli
//   /usr/bin/python3 tools/export_onnx.py   # build/onnx/transformer-d2l-{encoder,decoder}.onnx
//   node bench/wasm_bench.mjs [--runs 300] [--rounds 15] [--sentence "i'm home ."]
//                             [--skip native,onnx] [--backend scalar|simd]
//   ATTNLITE_WASM_DIR=DIR node bench/wasm_bench.mjs ...   # another WASM build
//
// Reports the median latency of --runs translations of one sentence, and the median time of
// --rounds passes over the 54 test sentences (the book's four and 50 corpus sentences).
// Native: `attnlite translate` over stdin with many lines, minus a one-line run (process
// start and model load), divided by the line count; the median of 5 such runs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { loadAttnlite, nativeCli, root, sentences } from '../tests/web/common.mjs';
import { cliTexts, median, perLine } from './native_cli.mjs';
import { ortGreedy } from './ort_greedy.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const RUNS = Number(opt('runs', 300));
const ROUNDS = Number(opt('rounds', 15));
const SENTENCE = opt('sentence', "i'm home .");
const MODEL = opt('model', join(root, 'models', 'transformer-d2l.safetensors'));
const ONNX = opt('onnx', join(root, 'build', 'onnx', 'transformer-d2l'));
const SKIP = (opt('skip', '') ?? '').split(',');  // --skip native,onnx: the WASM rows only
const BACKEND = opt('backend', '');               // --backend scalar|simd (default: the build's choice)

const ms = (x) => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));

async function timeIt(fn, n) {
  const t = [];
  for (let i = 0; i < n; ++i) {
    const t0 = performance.now();
    await fn(i);
    t.push(performance.now() - t0);
  }
  return median(t);
}

const rows = [];
function report(name, one, pass, note = '') {
  rows.push({ name, one, pass, note });
  console.error(`${name}: ${ms(one)} ms / sentence, ${ms(pass)} ms / 54 sentences ${note}`);
}

// ---- attnlite WASM ----
const al = await loadAttnlite();  // ATTNLITE_WASM_DIR picks another build (default build/wasm-node)
if (BACKEND) al.setBackend(BACKEND);
const model = al.loadModel(readFileSync(MODEL));
const kernels = al.backend ?? 'scalar';
const reference = sentences.map((s) => model.translate(s, { attention: false }));
for (const attention of [false, true]) {
  const run = (s) => model.translate(s, { attention });
  for (let i = 0; i < 50; ++i) run(SENTENCE);  // warm-up
  const one = await timeIt(() => run(SENTENCE), RUNS);
  const pass = await timeIt(() => sentences.forEach(run), ROUNDS);
  report(`attnlite WASM (${kernels} kernels)${attention ? ' + every attention weight copied to JS' : ''}`, one, pass);
}

// ---- attnlite native ----
if (SKIP.includes('native')) {
  console.error('skipping native (--skip)');
} else if (existsSync(nativeCli)) {
  const n1 = Math.max(2000, RUNS * 10);
  const one = perLine(MODEL, Array(n1).fill(SENTENCE));
  const reps = 40;
  const all = Array.from({ length: reps }, () => sentences).flat();
  const pass = perLine(MODEL, all) * sentences.length;
  const out = cliTexts(MODEL, sentences);
  const agree = out.filter((t, i) => t === reference[i].text).length;
  report('attnlite native (CLI over stdin)', one, pass, `(${agree}/54 translations identical to WASM)`);
} else {
  console.error(`skipping native: ${nativeCli} is missing`);
}

// ---- onnxruntime-web ----
if (SKIP.includes('onnx')) {
  console.error('skipping onnxruntime-web (--skip)');
} else if (existsSync(`${ONNX}-encoder.onnx`)) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  const meta = JSON.parse(readFileSync(`${ONNX}.json`, 'utf8'));
  const so = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const enc = await ort.InferenceSession.create(readFileSync(`${ONNX}-encoder.onnx`), so);
  const dec = await ort.InferenceSession.create(readFileSync(`${ONNX}-decoder.onnx`), so);
  // the book's vocabulary order: <unk> <pad> <bos> <eos>
  const ortTranslate = ortGreedy(ort, enc, dec, meta, 2, 3);
  // Source ids from attnlite's tokenizer (the book's preprocessing), outside the timing.
  const src = sentences.map((s, i) => ({ ids: Array.from(reference[i].srcIds), valid: reference[i].srcValid }));
  let agree = 0;
  for (let i = 0; i < sentences.length; ++i) {
    const got = await ortTranslate(src[i].ids, src[i].valid);
    if (got.join(' ') === Array.from(reference[i].tokenIds).join(' ')) ++agree;
  }
  const s0 = src[sentences.indexOf(SENTENCE)] ?? src[3];
  for (let i = 0; i < 50; ++i) await ortTranslate(s0.ids, s0.valid);
  const one = await timeIt(() => ortTranslate(s0.ids, s0.valid), RUNS);
  const pass = await timeIt(async () => {
    for (const s of src) await ortTranslate(s.ids, s.valid);
  }, ROUNDS);
  report(`onnxruntime-web ${ort.env.versions?.web ?? ''} (wasm SIMD, 1 thread)`.replace('  ', ' '), one, pass,
    `(${agree}/54 token sequences identical to attnlite)`);
} else {
  console.error(`skipping onnxruntime-web: run /usr/bin/python3 tools/export_onnx.py first (${ONNX}-encoder.onnx)`);
}

// ---- the table ----
const emcc = `emcc ${/(\d+\.\d+\.\d+)/.exec(spawnSync('emcc', ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? '?'}`;
console.log(`Machine: ${cpus()[0].model}, ${cpus().length} logical CPUs; node ${process.version}; ${emcc}`);
console.log(`Sentence "${SENTENCE}": median of ${RUNS} runs; 54 sentences: median of ${ROUNDS} passes.\n`);
console.log('| runtime | one sentence (ms) | 54 sentences (ms) | per sentence in the 54 (ms) | note |');
console.log('|---|---:|---:|---:|---|');
for (const r of rows) console.log(`| ${r.name} | ${ms(r.one)} | ${ms(r.pass)} | ${ms(r.pass / 54)} | ${r.note.replace(/[()]/g, '')} |`);
