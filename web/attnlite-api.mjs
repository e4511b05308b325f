// attnlite in JavaScript: a small API over the WASM module built by wasm/build.sh.
//
//   import { Attnlite } from './attnlite-api.mjs';
//   const al = await Attnlite.create();          // loads ./attnlite.mjs + ./attnlite.wasm
//   const m = al.loadModel(bytes);                // Uint8Array of a .safetensors file
//   const r = m.translate("i'm home .", { d2lCompat: false });
//   r.text, r.tokens, r.scores, r.srcTokens, r.attention.encoderSelf[l][h] ...
//   (Transformer: encoderSelf[l][h] S x S, decoderSelf[l][h] steps x steps, cross[l][h]
//   steps x S, row-major Float32Arrays; Bahdanau: cross[0][0] only)
//   const b = m.translate("i'm home .", { beam: 4, alpha: 0.75 });   // beam search
//   b.nbest: [{ text, score, logp, length, eos, tokenIds, tokens }, ...] best first
//   (b.text, b.tokens, b.scores and b.attention are those of b.nbest[0])
//   const img = al.renderHeatmap(r.attention.cross[0][0], { queries: r.steps, keys: r.S });
//   m.free();
//
// Every array handed back is a copy: WASM memory is reused by the next call. Errors are
// thrown as AttnliteError with the library's message.

export class AttnliteError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnliteError';
  }
}

const STYLES = { line: 0, dashed: 1, dashdot: 2, dotted: 3, points: 4 };
// Fields of al_result_int.
const F = { numTokens: 0, steps: 1, eos: 2, srcLen: 3, srcValid: 4, truncated: 5, numUnknown: 6,
  layers: 7, heads: 8, S: 9, ld: 10 };

// Fields of al_nbest_value.
const NB = { score: 0, logp: 1, length: 2, eos: 3, numTokens: 4, textBytes: 5 };

const words = (s) => (s ? s.split(' ') : []);

export class Attnlite {
  // options.factory: the Emscripten module factory (default: import ./attnlite.mjs next to
  // this file); options.wasmBinary: the .wasm bytes (skips fetching them, e.g. in node).
  static async create(options = {}) {
    const factory = options.factory ?? (await import(new URL('./attnlite.mjs', import.meta.url))).default;
    const args = {};
    if (options.wasmBinary) {
      args.wasmBinary = options.wasmBinary;
    } else if (!options.factory && typeof process === 'object' && process.versions?.node) {
      // Node: read the .wasm beside this file (the glue would try fetch() on a file: URL).
      const { readFile } = await import('node:fs/promises');
      args.wasmBinary = await readFile(new URL('./attnlite.wasm', import.meta.url));
    }
    if (options.locateFile) args.locateFile = options.locateFile;
    return new Attnlite(await factory(args));
  }

  constructor(mod) {
    this.mod = mod;
  }

  // The kernels in use: 'scalar', or the SIMD table's name when the build has them.
  get backend() { return this.mod.UTF8ToString(this.mod._al_backend()); }
  // 'scalar' or 'simd' (an AttnliteError when this build has no SIMD kernels).
  setBackend(name) {
    if (name !== 'scalar' && name !== 'simd') throw new AttnliteError(`unknown backend ${name}`);
    if (!this.mod._al_set_backend(name === 'simd' ? 1 : 0)) throw this._error('cannot switch kernels');
  }

  // ---- memory helpers ----
  get heapSize() { return this.mod.HEAP8.length; }       // bytes of WASM memory
  heapUsed() { return this.mod._al_heap_used() >>> 0; }  // bytes the allocator has handed out

  _error(fallback) {
    const msg = this.mod.UTF8ToString(this.mod._al_last_error());
    return new AttnliteError(msg || fallback);
  }

  _str(s) {  // a UTF-8 copy of s in WASM memory (free it with _free)
    const n = this.mod.lengthBytesUTF8(s) + 1;
    const p = this.mod._malloc(n);
    this.mod.stringToUTF8(s, p, n);
    return p;
  }

  _floats(arr) {  // a copy of a float array in WASM memory
    const p = this.mod._malloc(Math.max(4, arr.length * 4));
    this.mod.HEAPF32.set(arr, p >> 2);
    return p;
  }

  _withStrings(strings, fn) {
    const ptrs = strings.map((s) => this._str(s));
    try {
      return fn(...ptrs);
    } finally {
      ptrs.forEach((p) => this.mod._free(p));
    }
  }

  // ---- models ----
  loadModel(bytes) {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new AttnliteError('loadModel needs a Uint8Array or ArrayBuffer');
    const p = this.mod._malloc(Math.max(1, bytes.length));
    this.mod.HEAPU8.set(bytes, p);
    let h;
    try {
      h = this.mod._al_model_load(p, bytes.length);
    } finally {
      this.mod._free(p);  // the model keeps its own copy
    }
    if (!h) throw this._error('cannot load the model');
    return new Model(this, h);
  }

  // ---- figures ----
  // matrices: Float32Array (rows, cols, queries, keys). Returns {width, height, data, layout}
  // (data: Uint8ClampedArray RGBA, ready for new ImageData(data, width, height)).
  renderHeatmap(matrices, o = {}) {
    const rows = o.rows ?? 1, cols = o.cols ?? 1;
    const queries = o.queries, keys = o.keys;
    if (!(queries > 0 && keys > 0)) throw new AttnliteError('renderHeatmap needs queries and keys');
    if (matrices.length !== rows * cols * queries * keys)
      throw new AttnliteError(`renderHeatmap: ${matrices.length} values for ${rows}x${cols}x${queries}x${keys}`);
    const m = this.mod;
    const pm = this._floats(matrices);
    try {
      const px = this._withStrings(
        [o.cmap ?? 'Reds', o.xlabel ?? 'Keys', o.ylabel ?? 'Queries', (o.titles ?? []).join('\n'),
          (o.xticks ?? []).join('\n'), (o.yticks ?? []).join('\n')],
        (cm, xl, yl, ti, xt, yt) => m._al_render_heatmap(pm, rows, cols, queries, keys, cm, xl, yl, ti, xt, yt,
          o.width ?? 2.5, o.height ?? 2.5, o.dpi ?? 100, o.vmin ?? NaN, o.vmax ?? NaN,
          o.colorbar === false ? 0 : 1, o.annotate ? 1 : 0));
      if (!px) throw this._error('cannot render the heatmap');
      const img = this._image(px);
      const n = m._al_layout_size();
      const L = m.HEAP32.slice(m._al_layout() >> 2, (m._al_layout() >> 2) + n);
      img.layout = new HeatmapLayout(L, m._al_layout_vmin(), m._al_layout_vmax());
      return img;
    } finally {
      m._free(pm);
    }
  }

  // series: [{x, y, label, style: 'line'|'dashed'|'dashdot'|'dotted'|'points', color: [r,g,b]}]
  // options: xlabel, ylabel, xlim [lo, hi], ylim, width, height (inches), dpi, legend.
  renderPlot(series, o = {}) {
    const m = this.mod;
    const n = series.length;
    const total = series.reduce((a, s) => a + s.x.length, 0);
    const xs = new Float32Array(total), ys = new Float32Array(total);
    const lens = new Int32Array(n), styles = new Int32Array(n), colors = new Int32Array(n);
    let at = 0;
    series.forEach((s, i) => {
      if (s.x.length !== s.y.length) throw new AttnliteError('renderPlot: x and y differ in length');
      xs.set(s.x, at);
      ys.set(s.y, at);
      at += s.x.length;
      lens[i] = s.x.length;
      styles[i] = STYLES[s.style ?? 'line'] ?? 0;
      colors[i] = s.color ? (s.color[0] << 16) | (s.color[1] << 8) | s.color[2] : -1;
    });
    const lim = new Float32Array([o.xlim?.[0] ?? NaN, o.xlim?.[1] ?? NaN, o.ylim?.[0] ?? NaN, o.ylim?.[1] ?? NaN]);
    const ptrs = [xs, ys, lim].map((a) => this._floats(a));
    const ints = [lens, styles, colors].map((a) => {
      const p = m._malloc(Math.max(4, a.length * 4));
      m.HEAP32.set(a, p >> 2);
      return p;
    });
    try {
      const px = this._withStrings(
        [series.map((s) => s.label ?? '').join('\n'), o.xlabel ?? '', o.ylabel ?? ''],
        (lb, xl, yl) => m._al_render_plot(n, ptrs[0], ptrs[1], ints[0], ints[1], ints[2], lb, xl, yl, ptrs[2],
          o.width ?? 3.5, o.height ?? 2.5, o.dpi ?? 100, o.legend === false ? 0 : 1));
      if (!px) throw this._error('cannot render the plot');
      return this._image(px);
    } finally {
      [...ptrs, ...ints].forEach((p) => m._free(p));
    }
  }

  _image(px) {
    const m = this.mod;
    const width = m._al_image_width(), height = m._al_image_height();
    return { width, height, data: new Uint8ClampedArray(m.HEAPU8.slice(px, px + width * height * 4).buffer) };
  }

  // [r, g, b] of a colormap ("Reds", "Blues", "viridis") at t in [0, 1].
  colormap(name, t) {
    const v = this._withStrings([name], (p) => this.mod._al_colormap_rgb(p, t));
    if (v < 0) throw this._error(`unknown colormap ${name}`);
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
  }

  // d2l 10.2 attention pooling: predictions y (nq) and weights (nq, nk) of the queries
  // against shared keys/values with a Gaussian kernel of width w.
  nadarayaWatson(queries, keys, values, w = 1) {
    const m = this.mod;
    const nq = queries.length, nk = keys.length;
    if (values.length !== nk) throw new AttnliteError('nadarayaWatson: keys and values differ in length');
    const pq = this._floats(queries), pk = this._floats(keys), pv = this._floats(values);
    const py = m._malloc(Math.max(4, nq * 4)), pw = m._malloc(Math.max(4, nq * nk * 4));
    try {
      if (!m._al_nadaraya_watson(py, pw, pq, nq, pk, pv, nk, w)) throw this._error('nadaraya_watson failed');
      return {
        y: m.HEAPF32.slice(py >> 2, (py >> 2) + nq),
        weights: m.HEAPF32.slice(pw >> 2, (pw >> 2) + nq * nk),
      };
    } finally {
      [pq, pk, pv, py, pw].forEach((p) => m._free(p));
    }
  }
}

// Where a heatmap's panels are, in image pixels, and which cell a pixel shows.
export class HeatmapLayout {
  constructor(L, vmin, vmax) {
    [this.width, this.height, this.rows, this.cols, this.queries, this.keys] = L;
    this.panels = [];
    let i = 6;
    for (let p = 0; p < this.rows * this.cols; ++p, i += 4)
      this.panels.push({ x: L[i], y: L[i + 1], w: L[i + 2], h: L[i + 3] });
    this.colorbar = { x: L[i], y: L[i + 1], w: L[i + 2], h: L[i + 3] };
    this.vmin = vmin;
    this.vmax = vmax;
  }

  // The pixels of cell (query q, key k) of panel (row r, col c), as the renderer tiles them.
  cell(r, c, q, k) {
    const P = this.panels[r * this.cols + c];
    const start = (i, n, len) => Math.floor((i * len + n - 1) / n);
    const x0 = start(k, this.keys, P.w), x1 = start(k + 1, this.keys, P.w);
    const y0 = start(q, this.queries, P.h), y1 = start(q + 1, this.queries, P.h);
    return { x: P.x + x0, y: P.y + y0, w: x1 - x0, h: y1 - y0 };
  }

  // {row, col, q, k} of the cell under pixel (x, y), or null outside every panel.
  cellAt(x, y) {
    for (let p = 0; p < this.panels.length; ++p) {
      const P = this.panels[p];
      if (x >= P.x && x < P.x + P.w && y >= P.y && y < P.y + P.h) {
        return {
          row: Math.floor(p / this.cols), col: p % this.cols,
          q: Math.floor(((y - P.y) * this.queries) / P.h), k: Math.floor(((x - P.x) * this.keys) / P.w),
        };
      }
    }
    return null;
  }
}

export class Model {
  constructor(al, handle) {
    this.al = al;
    this.h = handle;
    const m = al.mod;
    this.kind = m._al_model_kind(handle) ? 'bahdanau' : 'transformer';
    this.layers = m._al_model_layers(handle);  // 0 for Bahdanau
    this.heads = m._al_model_heads(handle);
    this.numSteps = m._al_model_num_steps(handle);
    this.maxSteps = m._al_model_max_steps(handle);
    this.srcVocabSize = m._al_model_src_vocab_size(handle);
    this.tgtVocabSize = m._al_model_tgt_vocab_size(handle);
    this.weightBytes = m._al_model_weight_bytes(handle) >>> 0;
    this.maxBeam = m._al_model_max_beam(handle);  // 8 (less for target vocabularies under 16)
    this.workspaceBytes = m._al_model_workspace_bytes(handle) >>> 0;  // the Translator's buffers
  }

  _live() {
    if (!this.h) throw new AttnliteError('the model was freed');
    return this.h;
  }

  // A metadata value of the file ('' when absent): attnlite.config, attnlite.license ...
  metadata(key) {
    const h = this._live();
    return this.al._withStrings([key], (p) => this.al.mod.UTF8ToString(this.al.mod._al_model_metadata(h, p)));
  }

  // Greedy translation as the book's predict_seq2seq, or beam search. options.d2lCompat:
  // the book's position-0-at-every-step decoding; options.maxSteps: 0 = the model's
  // num_steps; options.attention: false skips the attention weights (result.attention is
  // then null); options.beam: beam size, 1 (greedy, the default) to model.maxBeam (8);
  // options.alpha: length penalty in [0, 2] (default 0), hypotheses are ranked by
  // logp / length^alpha. result.nbest lists the hypotheses best first (one for greedy);
  // the rest of the result (text, tokens, scores, steps, eos, attention) is the best one.
  translate(sentence, options = {}) {
    const h = this._live();
    const m = this.al.mod;
    const withAttention = options.attention !== false;
    const beam = options.beam ?? 1, alpha = options.alpha ?? 0;
    if (!Number.isInteger(beam))
      throw new AttnliteError(`beam size must be an integer in [1, ${this.maxBeam}], got ${beam}`);
    if (typeof alpha !== 'number')
      throw new AttnliteError(`length penalty alpha must be a number in [0, 2], got ${alpha}`);
    const ok = this.al._withStrings([String(sentence)],
      (p) => m._al_translate(h, p, options.d2lCompat ? 1 : 0, options.maxSteps ?? 0, withAttention ? 1 : 0,
        beam, alpha));
    if (!ok) throw this.al._error('translation failed');
    const I = (f) => m._al_result_int(h, f);
    const n = I(F.numTokens), steps = I(F.steps), S = I(F.S), ld = I(F.ld);
    const L = I(F.layers), NH = I(F.heads);
    const ids = m._al_result_token_ids(h) >> 2, sc = m._al_result_scores(h) >> 2;
    const sids = m._al_result_src_ids(h) >> 2;
    const r = {
      text: m.UTF8ToString(m._al_result_text(h)),
      tokenIds: m.HEAP32.slice(ids, ids + n),
      scores: m.HEAPF32.slice(sc, sc + n),
      srcIds: m.HEAP32.slice(sids, sids + S),
      srcTokens: words(m.UTF8ToString(m._al_result_src_tokens(h))),
      srcWords: words(m.UTF8ToString(m._al_result_src_words(h))),
      unknown: words(m.UTF8ToString(m._al_result_unknown(h))),
      steps, eos: !!I(F.eos), srcLen: I(F.srcLen), srcValid: I(F.srcValid),
      truncated: !!I(F.truncated), layers: L, heads: NH, S,
      model: this.kind, positions: options.d2lCompat ? 'd2l' : 'step', beam, alpha,
    };
    const token = (id) => m.UTF8ToString(m._al_tgt_token(h, id));
    r.tokens = Array.from(r.tokenIds, token);
    r.nbest = [];
    for (let k = 0, nb = m._al_nbest_size(h); k < nb; ++k) {
      const V = (f) => m._al_nbest_value(h, k, f);
      const nt = V(NB.numTokens), tp = m._al_nbest_tokens(h, k) >> 2;
      const tokenIds = m.HEAP32.slice(tp, tp + nt);
      r.nbest.push({
        text: m.UTF8ToString(m._al_nbest_text(h, k), V(NB.textBytes)),
        score: V(NB.score), logp: V(NB.logp), length: V(NB.length), eos: !!V(NB.eos),
        tokenIds, tokens: Array.from(tokenIds, token),
      });
    }
    if (!withAttention) {
      r.attention = null;
      return r;
    }
    // Attention: copies out of the session's buffers (layouts of attnlite::Translation).
    const F32 = m.HEAPF32;
    const enc = m._al_result_attention(h, 0) >> 2, dec = m._al_result_attention(h, 1) >> 2,
      cr = m._al_result_attention(h, 2) >> 2;
    const att = { encoderSelf: [], decoderSelf: [], cross: [] };
    if (L > 0) {
      for (let l = 0; l < L; ++l) {
        const el = [], dl = [], cl = [];
        for (let hh = 0; hh < NH; ++hh) {
          const off = enc + (l * NH + hh) * S * S;
          el.push(F32.slice(off, off + S * S));
          const d = new Float32Array(steps * steps), c = new Float32Array(steps * S);
          for (let t = 0; t < steps; ++t) {
            const doff = dec + ((l * ld + t) * NH + hh) * ld;
            d.set(F32.subarray(doff, doff + steps), t * steps);
            const coff = cr + ((l * ld + t) * NH + hh) * S;
            c.set(F32.subarray(coff, coff + S), t * S);
          }
          dl.push(d);
          cl.push(c);
        }
        att.encoderSelf.push(el);
        att.decoderSelf.push(dl);
        att.cross.push(cl);
      }
    } else {
      att.cross.push([F32.slice(cr, cr + steps * S)]);  // Bahdanau: one layer, one head
    }
    r.attention = att;
    return r;
  }

  free() {
    if (this.h) this.al.mod._al_model_free(this.h);
    this.h = 0;
  }
}

export default Attnlite;
