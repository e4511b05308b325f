// onnxruntime-node peer of bench/bench_translate.cpp: the same greedy loop over the graphs
// that tools/export_onnx_peers.py writes (an encoder graph and a decoder-step graph).
//
//   node bench/peer_ort.mjs --onnx DIR --threads N [--json OUT] [--quick]
//
// DIR holds NAME.json + NAME.encoder.onnx + NAME.decoder_step.onnx for transformer-d2l,
// bahdanau-d2l (when exported) and base-transformer. For the d2l models it prints the
// greedy tokens of the book's four sentences (bench/run.sh compares them with attnlite's)
// and times "i'm home ."; for the base model it times the encoder (20-token source) and
// a 20-step greedy decode at batch 1 and 16. Times are medians of repeated runs.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const dir = opt('--onnx', 'build/bench/onnx');
const threads = parseInt(opt('--threads', '1'), 10);
const jsonOut = opt('--json', null);
const quick = args.includes('--quick');

const BOOK = ['go .', 'i lost .', "he's calm .", "i'm home ."];

function now() { return Number(process.hrtime.bigint()) / 1e6; }  // ms
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
// Repeat fn (async) until both min_runs and min_ms are reached; median ms per call, wall
// clock and CPU time of the process (all threads; with 1 intra-op thread it leaves out the
// time slices of other processes on a shared machine).
async function timeit(fn, minRuns, minMs) {
  const ts = [], cs = [];
  const t0 = now();
  while (ts.length < minRuns || now() - t0 < minMs) {
    const c = process.cpuUsage();
    const a = now();
    await fn();
    ts.push(now() - a);
    const d = process.cpuUsage(c);
    cs.push((d.user + d.system) / 1000);
  }
  return { median_ms: median(ts), min_ms: Math.min(...ts), runs: ts.length, cpu_ms: median(cs) };
}

const i64 = (arr, dims) => new ort.Tensor('int64', BigInt64Array.from(arr.map(BigInt)), dims);

class Model {
  static async load(name) {
    const info = JSON.parse(fs.readFileSync(path.join(dir, name + '.json'), 'utf8'));
    const so = {
      intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    };
    const m = new Model();
    m.name = name;
    m.info = info;
    m.cfg = info.config;
    m.enc = await ort.InferenceSession.create(path.join(dir, info.encoder), so);
    m.dec = await ort.InferenceSession.create(path.join(dir, info.decoder_step), so);
    m.src_index = new Map(info.src_vocab.map((t, i) => [t, i]));
    m.unk = m.src_index.get('<unk>');
    m.pad = m.src_index.get('<pad>');
    m.src_eos = m.src_index.get('<eos>');
    m.bos = info.tgt_vocab.indexOf('<bos>');
    m.eos = info.tgt_vocab.indexOf('<eos>');
    return m;
  }

  // predict_seq2seq's source: lower().split(' ') + <eos>, truncate_pad to num_steps; the
  // valid length counts the <eos> (capped at num_steps, which masks the same keys).
  source(sentences) {
    const S = this.cfg.num_steps;
    const ids = [], valid = [];
    for (const s of sentences) {
      const toks = s.toLowerCase().split(' ').map((w) => this.src_index.get(w) ?? this.unk);
      toks.push(this.src_eos);
      valid.push(Math.min(toks.length, S));
      for (let k = 0; k < S; ++k) ids.push(k < toks.length ? toks[k] : this.pad);
    }
    return { src: i64(ids, [sentences.length, S]), valid: i64(valid, [sentences.length]) };
  }

  async encode(src, valid) {
    return this.info.kind === 'transformer'
      ? this.enc.run({ src, valid_len: valid })
      : this.enc.run({ src });
  }

  // Greedy decode of a batch; stops at <eos> (all rows) unless fixed, after maxSteps.
  async translate(sentences, maxSteps, fixed = false) {
    const B = sentences.length, V = this.cfg.tgt_vocab_size, L = this.cfg.num_layers;
    const H = this.cfg.num_hiddens;
    const { src, valid } = this.source(sentences);
    const e = await this.encode(src, valid);
    const out = sentences.map(() => []);
    const done = new Array(B).fill(false);
    let tok = new Array(B).fill(this.bos);
    let state;
    if (this.info.kind === 'transformer') {
      const empty = new ort.Tensor('float32', new Float32Array(0), [L, B, 0, H]);
      state = { self_k: empty, self_v: empty };
    } else {
      state = { hidden: e.hidden };
    }
    for (let t = 0; t < maxSteps; ++t) {
      let r;
      if (this.info.kind === 'transformer') {
        r = await this.dec.run({
          token: i64(tok, [B]), pos: i64([t], [1]), self_k: state.self_k, self_v: state.self_v,
          cross_k: e.cross_k, cross_v: e.cross_v, valid_len: valid,
        });
        state = { self_k: r.new_self_k, self_v: r.new_self_v };
      } else {
        r = await this.dec.run({
          token: i64(tok, [B]), hidden: state.hidden, enc_out: e.enc_out, enc_keys: e.enc_keys,
          valid_len: valid,
        });
        state = { hidden: r.new_hidden };
      }
      const lg = r.logits.data;
      let live = 0;
      for (let b = 0; b < B; ++b) {
        let best = 0;
        const row = b * V;
        for (let v = 1; v < V; ++v) if (lg[row + v] > lg[row + best]) best = v;
        tok[b] = best;
        if (done[b]) continue;
        if (best === this.eos && !fixed) done[b] = true;
        else out[b].push(best);
        if (!done[b]) ++live;
      }
      if (live === 0) break;
    }
    return out;
  }

  text(ids) { return ids.map((i) => this.info.tgt_vocab[i]).join(' '); }
}

// The sentences bench_translate.cpp decodes on the base model: 19 words + <eos>.
function baseSentences(n) {
  const out = [];
  for (let i = 0; i < n; ++i) {
    const w = [];
    for (let k = 0; k < 19; ++k) w.push('w' + (4 + ((i * 977 + k * 131) % 31996)));
    out.push(w.join(' '));
  }
  return out;
}

const results = { peer: 'onnxruntime-node', version: ort.env.versions?.node ?? '?', threads,
  d2l: {}, base: null };

for (const name of ['transformer-d2l', 'bahdanau-d2l']) {
  if (!fs.existsSync(path.join(dir, name + '.json'))) continue;
  const m = await Model.load(name);
  const S = m.cfg.num_steps;
  const book = {};
  for (const s of BOOK) {
    const [ids] = await m.translate([s], S);
    book[s] = ids;
    console.log(`${name}: ${s} => ${m.text(ids)}  [${ids.join(' ')}]`);
  }
  const t = await timeit(() => m.translate(["i'm home ."], S), quick ? 20 : 200, quick ? 300 : 2000);
  console.log(`${name}: "i'm home ." ${(t.median_ms * 1000).toFixed(1)} us (median of ${t.runs}; ` +
              `CPU ${(t.cpu_ms * 1000).toFixed(1)} us)`);
  results.d2l[name] = { sentence_us: t.median_ms * 1000, min_us: t.min_ms * 1000, runs: t.runs,
    cpu_us: t.cpu_ms * 1000, book };
}

if (fs.existsSync(path.join(dir, 'base-transformer.json'))) {
  const m = await Model.load('base-transformer');
  const base = { steps: 20, encoder_ms: {}, translate_ms: {}, decode_tok_s: {},
    cpu: { encoder_ms: {}, translate_ms: {}, decode_tok_s: {} } };
  for (const B of [1, 16]) {
    const sents = baseSentences(B);
    const { src, valid } = m.source(sents);
    await m.encode(src, valid);
    const te = await timeit(() => m.encode(src, valid), quick ? 3 : 10, quick ? 200 : 2000);
    await m.translate(sents, 20, true);
    const tt = await timeit(() => m.translate(sents, 20, true), quick ? 2 : 5, quick ? 500 : 5000);
    base.encoder_ms[B] = te.median_ms;
    base.translate_ms[B] = tt.median_ms;
    base.decode_tok_s[B] = (B * 20) / ((tt.median_ms - te.median_ms) / 1000);
    base.cpu.encoder_ms[B] = te.cpu_ms;
    base.cpu.translate_ms[B] = tt.cpu_ms;
    base.cpu.decode_tok_s[B] = (B * 20) / ((tt.cpu_ms - te.cpu_ms) / 1000);
    console.log(`base-transformer B=${B}: encoder ${te.median_ms.toFixed(2)} ms, translate(20 steps) ` +
                `${tt.median_ms.toFixed(1)} ms, decode ${base.decode_tok_s[B].toFixed(1)} tok/s ` +
                `(CPU: ${te.cpu_ms.toFixed(2)} ms, ${tt.cpu_ms.toFixed(1)} ms, ` +
                `${base.cpu.decode_tok_s[B].toFixed(1)} tok/s)`);
  }
  results.base = base;
}

if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(results, null, 1));
