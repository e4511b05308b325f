// The native CLI's time per translation, the method every WASM benchmark compares with
// (bench/wasm_bench.mjs, wasm_bench_fra.mjs, wasm_bench_page.mjs): `attnlite translate` over
// stdin, the time of a run with the lines minus a run of their first line alone (process start,
// model load), divided by the line count; the median of 5 such runs.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';

import { nativeCli } from '../tests/web/common.mjs';

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// One run of `attnlite translate --whole --model MODEL [--beam K]` over the lines (each line one
// sentence, as the WebAssembly Model.translate it is compared with): { t (ms), out }.
export function runCli(model, lines, beam = 1) {
  const extra = beam > 1 ? ['--beam', String(beam)] : [];
  const t0 = performance.now();
  const p = spawnSync(nativeCli, ['translate', '--whole', '--model', model, ...extra],
    { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 64 << 20 });
  const t = performance.now() - t0;
  if (p.status !== 0) throw new Error(`native CLI failed: ${p.stderr}`);
  return { t, out: p.stdout };
}

// Milliseconds per line (the method above).
export function perLine(model, lines, beam = 1) {
  const base = median([0, 1, 2, 3, 4].map(() => runCli(model, [lines[0]], beam).t));
  return median([0, 1, 2, 3, 4].map(() => (runCli(model, lines, beam).t - base) / lines.length));
}

// The CLI's translations of the lines, one string per line.
export const cliTexts = (model, lines, beam = 1) => runCli(model, lines, beam).out.replace(/\n$/, '').split('\n');
