// Greedy decoding with onnxruntime-web over the batch-1 graphs of tools/export_onnx.py
// (tools/attnlite_tools/onnx_export.py, export_batch1; the loop of its greedy_batch1): the
// encoder once, then one decoder-step run per step with position t at step t and the
// self-attention cache fed back, the argmax over the logits in JS, until <eos> or num_steps
// steps. No imports of its own: node (bench/wasm_bench.mjs) and Chromium
// (bench/wasm_bench_page.mjs, which imports it from the repository's server) pass their ort.
//
// ortGreedy(ort, enc, dec, meta, bos, eos) -> async translate(srcIds, valid) -> token ids
// without <eos>; meta is the export's .json, srcIds num_steps ids padded with <pad>, valid the
// count up to and with <eos>.
export function ortGreedy(ort, enc, dec, meta, bos, eos) {
  const { num_steps: S, num_hiddens: H } = meta.config;
  const I64 = (a, dims) => new ort.Tensor('int64', BigInt64Array.from(a, BigInt), dims);
  const BOS = BigInt(bos), EOS = BigInt(eos);
  return async function translate(srcIds, valid) {
    const vl = I64([valid], [1]);
    const cross = await enc.run({ src: I64(srcIds, [1, S]), valid_len: vl });
    const feeds = { valid_len: vl };
    for (const n of meta.cross) feeds[n] = cross[n];
    for (const n of meta.past) feeds[n] = new ort.Tensor('float32', new Float32Array(0), [1, 0, H]);
    const out = [];
    let tok = BOS;
    for (let t = 0; t < S; ++t) {
      feeds.token = new ort.Tensor('int64', BigInt64Array.of(tok), [1, 1]);
      feeds.position = new ort.Tensor('int64', BigInt64Array.of(BigInt(t)), [1]);
      const r = await dec.run(feeds);
      const lg = r.logits.data;
      let best = 0;
      for (let v = 1; v < lg.length; ++v) if (lg[v] > lg[best]) best = v;
      tok = BigInt(best);
      if (tok === EOS) break;
      out.push(best);
      meta.past.forEach((n, i) => { feeds[n] = r[meta.present[i]]; });
    }
    return out;
  };
}
