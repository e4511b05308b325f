// Translation time of the default model (models/transformer-fra.safetensors: 3 layers,
// 128 hidden units, 4 heads, int8 linear weights) in the attnlite WASM build, with its scalar
// and its SIMD128 kernel tables (al.setBackend), against the native CLI. Greedy and beam 4,
// over the English column of the first lines of models/transformer-fra.test.tsv.
//
//   wasm/build.sh node                      # build/wasm-node (the web build's kernels)
//   cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release
//   cmake --build build/native --target attnlite_cli -j2
//   node bench/wasm_bench_fra.mjs [--lines 100] [--rounds 7] [--reps 3] [--skip native]
//                                 [--also DIR]   # another build's default kernels too (e.g.
//                                                # an earlier web/ checked out into DIR)
//
// WASM: Model.translate() without attention weights (as the CLI), the median of --rounds
// passes over the sentences after one warm-up pass, divided by their number.
// Native: `attnlite translate [--beam 4]` over stdin with the sentences repeated --reps times,
// minus a one-line run (process start, model load), divided by the line count; the median of
// 5 such runs (the method of bench/wasm_bench.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { loadAttnlite, nativeCli, root } from '../tests/web/common.mjs';
import { cliTexts, median, perLine } from './native_cli.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const LINES = Number(opt('lines', 100));
const ROUNDS = Number(opt('rounds', 7));
const REPS = Number(opt('reps', 3));
const SKIP = (opt('skip', '') ?? '').split(',');
const ALSO = opt('also', '');
const NAME = opt('model', 'transformer-fra-bpe');
const MODEL = join(root, 'models', `${NAME}.safetensors`);

const sentences = readFileSync(join(root, 'models', `${NAME}.test.tsv`), 'utf8')
  .split('\n').filter((l) => l.length > 0).slice(0, LINES).map((l) => l.split('\t')[0]);
const ms = (x) => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const modes = [{ name: 'greedy', beam: 1 }, { name: 'beam 4', beam: 4 }];

const result = {};  // result[mode][runtime] = ms per sentence
const texts = {};   // texts[mode][runtime] = translations, to count agreement
for (const m of modes) {
  result[m.name] = {};
  texts[m.name] = {};
}

// ---- attnlite WASM: both kernel tables of this build, and --also's default ----
const al = await loadAttnlite();
const model = al.loadModel(readFileSync(MODEL));
const builtIn = al.backend;
const other = ALSO ? await loadAttnlite(ALSO) : null;
const otherModel = other?.loadModel(readFileSync(MODEL));
for (const backend of ['scalar', 'simd', ...(other ? ['also'] : [])]) {
  const mdl = backend === 'also' ? otherModel : model;
  if (backend !== 'also') al.setBackend(backend);
  const label = backend === 'also' ? `WASM ${other.backend} (${ALSO})` : `WASM ${al.backend}`;
  for (const m of modes) {
    const run = () => sentences.map((s) => mdl.translate(s, { attention: false, beam: m.beam }).text);
    texts[m.name][label] = run();  // warm-up
    const t = [];
    for (let r = 0; r < ROUNDS; ++r) {
      const t0 = performance.now();
      run();
      t.push(performance.now() - t0);
    }
    result[m.name][label] = median(t) / sentences.length;
    console.error(`${label}, ${m.name}: ${ms(result[m.name][label])} ms / sentence`);
  }
}
al.setBackend(builtIn === 'scalar' ? 'scalar' : 'simd');

// ---- attnlite native ----
if (SKIP.includes('native')) {
  console.error('skipping native (--skip)');
} else if (!existsSync(nativeCli)) {
  console.error(`skipping native: ${nativeCli} is missing`);
} else {
  for (const m of modes) {
    const all = Array.from({ length: REPS }, () => sentences).flat();
    result[m.name].native = perLine(MODEL, all, m.beam);
    texts[m.name].native = cliTexts(MODEL, sentences, m.beam);
    console.error(`native, ${m.name}: ${ms(result[m.name].native)} ms / sentence`);
  }
}

// ---- report (markdown) ----
const cpu = cpus()[0]?.model ?? '?';
console.log(`${sentences.length} sentences of models/${NAME}.test.tsv; node ${process.version}; ` +
  `${cpus().length} CPUs (${cpu}); load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} at the end\n`);
const runtimes = Object.keys(result.greedy);
console.log(`| decoding | ${runtimes.map((r) => `${r} (ms / sentence)`).join(' | ')} | SIMD128 / scalar | WASM SIMD128 / native |`);
console.log(`|---|${runtimes.map(() => '---:').join('|')}|---:|---:|`);
for (const m of modes) {
  const r = result[m.name];
  const simd = r[runtimes.find((k) => k.startsWith('WASM') && !k.endsWith('scalar'))];
  const scalar = r['WASM scalar'];
  const ratio = (a, b) => (a && b ? (a / b).toFixed(2) : '–');
  console.log(`| ${m.name} | ${runtimes.map((k) => ms(r[k])).join(' | ')} | ${ratio(simd, scalar)} | ${ratio(simd, r.native)} |`);
}
for (const m of modes) {
  const t = texts[m.name], keys = Object.keys(t);
  const agree = keys.slice(1).map((k) => `${k}: ${t[k].filter((x, i) => x === t[keys[0]][i]).length}/${sentences.length}`);
  console.log(`\n${m.name}: translations identical to ${keys[0]}: ${agree.join(', ')}`);
}
