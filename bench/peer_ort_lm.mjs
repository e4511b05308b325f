// onnxruntime-node peer of bench/bench_generate.cpp: greedy generation with the language
// model's ONNX graph (tools/export_lm_bench.py: lm.onnx with past keys/values), the loop in JS.
//
//   node bench/peer_ort_lm.mjs --dir OUT_DIR --threads N [--tokens 16] [--gens 4]
//       [--min-time 2] [--min-runs 10] [--json OUT]
//
// One graph serves the prompt and every step: input_ids (1, n), past_k/past_v
// (L, 1, NH, P, dh) -> logits (1, V) of the last position, present_k/present_v with P + n
// positions. Per generation: the prompt (n = 8, P = 0), then one token per run, feeding
// present back as past. Session: intraOpNumThreads N, interOpNumThreads 1, sequential, all
// graph optimisations. Workload and tokens/s as in bench_generate.cpp. The generated ids are
// checked against lm.json's (the full forward of PyTorch) before timing.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const dir = opt('--dir', 'build-bench/bench/lm');
const threads = parseInt(opt('--threads', '1'), 10);
const tokens = parseInt(opt('--tokens', '16'), 10);
const gens = parseInt(opt('--gens', '4'), 10);
const minTime = parseFloat(opt('--min-time', '2')) * 1000;
const minRuns = parseInt(opt('--min-runs', '10'), 10);
const jsonOut = opt('--json', null);

const info = JSON.parse(fs.readFileSync(path.join(dir, 'lm.json'), 'utf8'));
const cfg = info.config;
const L = cfg.num_layers, NH = cfg.num_heads, dh = cfg.d_model / cfg.num_heads;
const V = cfg.vocab_size, T = cfg.max_len, eos = info.eos;

const session = await ort.InferenceSession.create(path.join(dir, info.onnx), {
  intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const argmax = (z) => {
  let best = 0;
  for (let v = 1; v < V; ++v) if (z[v] > z[best]) best = v;  // the lowest id on ties
  return best;
};

const empty = new ort.Tensor('float32', new Float32Array(0), [L, 1, NH, 0, dh]);
const promptIds = new ort.Tensor('int64', BigInt64Array.from(info.prompt_ids.map(BigInt)),
  [1, info.prompt_ids.length]);

async function generate() {
  let r = await session.run({ input_ids: promptIds, past_k: empty, past_v: empty });
  let pos = info.prompt_ids.length;
  const out = [];
  for (;;) {
    const tok = argmax(r.logits.data);
    out.push(tok);
    if (tok === eos || out.length === tokens || pos === T) return out;
    r = await session.run({
      input_ids: new ort.Tensor('int64', BigInt64Array.of(BigInt(tok)), [1, 1]),
      past_k: r.present_k, past_v: r.present_v,
    });
    ++pos;
  }
}

async function workload() {
  let n = 0;
  for (let g = 0; g < gens; ++g) n += (await generate()).length;
  return n;
}

const ids = await generate();
const expected = info.expected.slice(0, tokens);
if (JSON.stringify(ids) !== JSON.stringify(expected)) {
  console.error(`peer_ort_lm: tokens ${ids} differ from the full forward's ${expected}`);
  process.exit(1);
}
const perRun = await workload();  // warm-up
const walls = [], cpus = [];
const start = nowMs();
while (walls.length < minRuns || nowMs() - start < minTime) {
  const c = process.cpuUsage();
  const w = nowMs();
  await workload();
  walls.push((nowMs() - w) / 1000);
  const d = process.cpuUsage(c);
  cpus.push((d.user + d.system) / 1e6);
}
const w = median(walls), c = median(cpus);
const res = {
  peer: 'onnxruntime-node', version: ort.env.versions?.common ?? ort.env.versions?.node ?? '?',
  threads, gens, tokens, tokens_per_run: perRun, runs: walls.length, wall_s: w,
  min_wall_s: Math.min(...walls), cpu_s: c, tok_s: perRun / w, cpu_tok_s: perRun / c,
  ids: [...info.prompt_ids, ...ids],
};
const line = JSON.stringify(res);
console.log(line);
if (jsonOut) fs.writeFileSync(jsonOut, line + '\n');
