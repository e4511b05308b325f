// onnxruntime-node peer of bench/bench_classify.cpp: the Vision Transformer's ONNX graph
// (tools/export_vit_bench.py: vit.onnx, pixels (B, 1, 8, 8) 0..16 -> logits (B, K), the
// input_scale multiply inside the graph) on the test digits, the loop in JS.
//
//   node bench/peer_ort_vit.mjs --dir OUT_DIR --threads N --batch B [--min-time 2]
//       [--min-runs 10] [--logits OUT.f32] [--json OUT]
//
// Session: intraOpNumThreads N, interOpNumThreads 1, sequential, all graph optimisations.
// Workload (the same in every runtime): every image once in batches of B (the last batch
// the remainder), the label of each image by arg max in JS. images/s = N / median seconds
// per workload.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const dir = opt('--dir', 'build-bench/bench/vit');
const threads = parseInt(opt('--threads', '1'), 10);
const batch = parseInt(opt('--batch', '1'), 10);
const minTime = parseFloat(opt('--min-time', '2')) * 1000;
const minRuns = parseInt(opt('--min-runs', '10'), 10);
const logitsOut = opt('--logits', null);
const jsonOut = opt('--json', null);

const info = JSON.parse(fs.readFileSync(path.join(dir, 'vit.json'), 'utf8'));
const C = info.channels, S = info.image_size, K = info.num_classes, per = C * S * S;
const buf = fs.readFileSync(path.join(dir, info.images));
const pixels = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
const N = pixels.length / per;

const session = await ort.InferenceSession.create(path.join(dir, info.onnx), {
  intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
// the inputs of every batch, made once (views into the pixel array)
const inputs = [];
for (let i = 0; i < N; i += batch) {
  const nb = Math.min(batch, N - i);
  inputs.push(new ort.Tensor('float32', pixels.subarray(i * per, (i + nb) * per), [nb, C, S, S]));
}

async function workload(keep) {
  const pred = [], logits = [];
  for (const x of inputs) {
    const z = (await session.run({ pixels: x })).logits.data;
    for (let b = 0; b < z.length / K; ++b) {
      let best = 0;
      for (let k = 1; k < K; ++k) if (z[b * K + k] > z[b * K + best]) best = k;
      pred.push(best);
    }
    if (keep) logits.push(Float32Array.from(z));
  }
  return { pred, logits };
}

const first = await workload(true);  // warm-up, and the check's labels/logits
const walls = [], cpus = [];
const start = nowMs();
while (walls.length < minRuns || nowMs() - start < minTime) {
  const c = process.cpuUsage();
  const w = nowMs();
  await workload(false);
  walls.push((nowMs() - w) / 1000);
  const d = process.cpuUsage(c);
  cpus.push((d.user + d.system) / 1e6);
}
if (logitsOut) {
  const all = new Float32Array(N * K);
  let o = 0;
  for (const z of first.logits) { all.set(z, o); o += z.length; }
  fs.writeFileSync(logitsOut, Buffer.from(all.buffer));
}
const w = median(walls), c = median(cpus);
const res = {
  peer: 'onnxruntime-node', version: ort.env.versions?.common ?? ort.env.versions?.node ?? '?',
  threads, batch, images: N, runs: walls.length, wall_s: w, min_wall_s: Math.min(...walls),
  cpu_s: c, img_s: N / w, cpu_img_s: N / c, logits: logitsOut ?? '', pred: first.pred,
};
const line = JSON.stringify(res);
console.log(line);
if (jsonOut) fs.writeFileSync(jsonOut, line + '\n');
