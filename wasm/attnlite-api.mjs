// attnlite in JavaScript: a small API over the WASM module built by wasm/build.sh, which
// exports the C API of include/attnlite/c_api.h (plus the figures of wasm/bindings.cpp).
// Names follow the C API in camelCase: al_model_num_steps -> model.numSteps,
// al_result_src_valid -> result.srcValid, al_nbest_logp -> result.nbest[k].logp; docs/web.md
// has the whole table.
//
//   import { Attnlite } from './attnlite-api.mjs';
//   const al = await Attnlite.create();          // loads ./attnlite.mjs + ./attnlite.wasm
//   const m = al.loadModel(bytes);                // Uint8Array of a .safetensors file
//   const r = m.translate("i'm home .", { d2lCompat: false });
//   r.text, r.tokens, r.probs (= r.scores), r.srcTokens, r.attention.encoderSelf[l][h] ...
//   (Transformer: encoderSelf[l][h] S x S, decoderSelf[l][h] steps x steps, cross[l][h]
//   steps x S, row-major Float32Arrays; Bahdanau: cross[0][0] only)
//   const b = m.translate("i'm home .", { beam: 4, alpha: 0.75 });   // beam search
//   b.nbest: [{ text, score, logp, length, eos, tokenIds, tokens }, ...] best first
//   (b.text, b.tokens, b.probs and b.attention are those of b.nbest[0])
//   const img = al.renderHeatmap(r.attention.cross[0][0], { queries: r.steps, keys: r.S });
//   m.free();
//
// Every array handed back is a copy: WASM memory is reused by the next call. Errors are
// thrown as AttnliteError with the library's message; an argument of the wrong type (a
// number, null, an object where a string is expected) as a TypeError naming it. A text input
// over 4096 bytes of UTF-8 is refused before it is copied into WASM memory. Every method of
// a Model, Generator or Classifier after its free() throws "the model was freed" (generator,
// classifier); free() twice does nothing.

export class AttnliteError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnliteError';
  }
}

const STYLES = { line: 0, dashed: 1, dashdot: 2, dotted: 3, points: 4 };

// The page's session limits (al_limits): decoding can go past the model's num_steps when
// asked (maxSteps), up to 64 steps, which keeps the buffers small (the decoder
// self-attention weights grow with its square); beams up to 8 hypotheses: for the book's
// Transformer 3.1 MB of buffers instead of 0.2 MB, for its Bahdanau GRU 0.4 MB instead of
// 27 KB, for a 3-layer, 128-wide Transformer with 24000 French tokens 7.2 MB, not 0.7 MB.
const MAX_STEPS = 64, MAX_BEAM = 8, MAX_ALPHA = 2, MAX_INPUT_BYTES = 4096;

const words = (s) => (s ? s.split(' ') : []);
// Argument checks: a string (a TypeError otherwise) of at most MAX_INPUT_BYTES bytes of
// UTF-8 (the library's own message otherwise, thrown before anything is copied into WASM
// memory, which never shrinks), and an options object (undefined: the defaults).
const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object'
  : v === undefined ? 'undefined' : `a ${typeof v}`);
function text(al, v, call, what = 'sentence') {
  if (typeof v !== 'string') throw new TypeError(`${call}: the ${what} must be a string, got ${typeName(v)}`);
  // Up to 4096 UTF-16 units (at most 12 KB of UTF-8) go to the library, which checks the bytes.
  const n = v.length > MAX_INPUT_BYTES ? al.mod.lengthBytesUTF8(v) : 0;
  if (n > MAX_INPUT_BYTES) throw new AttnliteError(`${what} is too long: ${n} bytes (limit ${MAX_INPUT_BYTES})`);
  return v;
}
function optionsOf(o, call) {
  if (o === undefined) return {};
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw new TypeError(`${call}: options must be an object, got ${typeName(o)}`);
  return o;
}
// printf's %g for the messages (the C library's wording of nan and inf).
const g = (x) => (Number.isNaN(x) ? 'nan' : x === Infinity ? 'inf' : x === -Infinity ? '-inf'
  : String(Number(x.toPrecision(6))));

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
    this._check((e) => this.mod._al_set_backend(name === 'simd' ? 1 : 0, e), (ok) => !ok, 'cannot switch kernels');
  }

  // ---- memory helpers ----
  get heapSize() { return this.mod.HEAP8.length; }       // bytes of WASM memory
  heapUsed() { return this.mod._al_heap_used() >>> 0; }  // bytes the allocator has handed out

  // fn(errp) calls a C function with an al_error** out-parameter; a failure (the value
  // `failed` returns true for) becomes an AttnliteError with the error's message.
  _check(fn, failed, fallback) {
    const m = this.mod;
    const errp = m._malloc(4);
    m.HEAP32[errp >> 2] = 0;
    try {
      const v = fn(errp);
      if (!failed(v)) return v;
      const e = m.HEAP32[errp >> 2];
      const msg = e ? m.UTF8ToString(m._al_error_message(e)) : '';
      m._al_error_free(e);
      throw new AttnliteError(msg || fallback);
    } finally {
      m._free(errp);
    }
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

  // The words of a sentence as the book's preprocessing splits them (al_tokenize; no model
  // needed): "He's calm!" -> ["he's", 'calm', '!'].
  tokenize(sentence) {
    const m = this.mod;
    return words(this._withStrings([text(this, sentence, 'tokenize')], (p) => {
      const n = this._check((e) => m._al_tokenize(p, 0, 0, e), (v) => v < 0, 'cannot tokenize');
      const out = m._malloc(n + 1);
      try {
        m._al_tokenize(p, out, n + 1, 0);
        return m.UTF8ToString(out, n);
      } finally {
        m._free(out);
      }
    }));
  }

  // ---- images ----
  // The digits preprocessing of include/attnlite/image_input.h (digit_8x8: the ink's bounding
  // box, centred on the cell grid, 4x4 blocks -> 0..16), as `attnlite classify` does with
  // files. Both return a Float32Array of 64 values, row-major, 0 (paper) to 16 (ink).
  // digitFromRgba: RGBA pixels, an ImageData or {data, width, height} (al_digit_from_rgba:
  // dark ink on a light or transparent background).
  digitFromRgba(image, width = image?.width, height = image?.height) {
    const data = image?.data ?? image;
    if (!(data instanceof Uint8ClampedArray || data instanceof Uint8Array))
      throw new AttnliteError('digitFromRgba needs an ImageData or RGBA bytes with width and height');
    if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0 && data.length === width * height * 4))
      throw new AttnliteError(`digitFromRgba: ${data.length} bytes are not ${width} x ${height} RGBA pixels`);
    return this._digit(data, (p, out, e) => this.mod._al_digit_from_rgba(p, width, height, out, e));
  }

  // digitFromFileBytes: an image file's bytes (PNG, JPEG, BMP, GIF; al_digit_from_file_bytes).
  digitFromFileBytes(bytes) {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new AttnliteError('digitFromFileBytes needs a Uint8Array or ArrayBuffer');
    return this._digit(bytes, (p, out, e) => this.mod._al_digit_from_file_bytes(p, bytes.length, out, e));
  }

  _digit(bytes, fn) {
    const m = this.mod;
    const p = m._malloc(Math.max(1, bytes.length)), out = m._malloc(64 * 4);
    try {
      m.HEAPU8.set(bytes, p);
      this._check((e) => fn(p, out, e), (st) => st !== 0, 'cannot read the image');
      return m.HEAPF32.slice(out >> 2, (out >> 2) + 64);
    } finally {
      m._free(p);
      m._free(out);
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
      h = this._check((e) => this.mod._al_model_from_bytes(p, bytes.length, e), (v) => !v,
        'cannot load the model');
    } finally {
      this.mod._free(p);  // the model keeps its own copy
    }
    try {
      return new Model(this, h);
    } catch (e) {
      this.mod._al_model_free(h);
      throw e;
    }
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
      const h = this._withStrings(
        [o.cmap ?? 'Reds', o.xlabel ?? 'Keys', o.ylabel ?? 'Queries', (o.titles ?? []).join('\n'),
          (o.xticks ?? []).join('\n'), (o.yticks ?? []).join('\n')],
        (cm, xl, yl, ti, xt, yt) => this._check((e) => m._al_render_heatmap(pm, rows, cols, queries, keys,
          cm, xl, yl, ti, xt, yt, o.width ?? 2.5, o.height ?? 2.5, o.dpi ?? 100, o.vmin ?? NaN,
          o.vmax ?? NaN, o.colorbar === false ? 0 : 1, o.annotate ? 1 : 0, e), (v) => !v,
        'cannot render the heatmap'));
      return this._image(h, (img) => {
        const p = m._al_image_layout(h) >> 2, n = m._al_image_layout_size(h);
        img.layout = new HeatmapLayout(m.HEAP32.slice(p, p + n), m._al_image_vmin(h), m._al_image_vmax(h));
      });
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
      const h = this._withStrings(
        [series.map((s) => s.label ?? '').join('\n'), o.xlabel ?? '', o.ylabel ?? ''],
        (lb, xl, yl) => this._check((e) => m._al_render_plot(n, ptrs[0], ptrs[1], ints[0], ints[1], ints[2],
          lb, xl, yl, ptrs[2], o.width ?? 3.5, o.height ?? 2.5, o.dpi ?? 100, o.legend === false ? 0 : 1, e),
        (v) => !v, 'cannot render the plot'));
      return this._image(h);
    } finally {
      [...ptrs, ...ints].forEach((p) => m._free(p));
    }
  }

  // A copy of an al_image (then freed): {width, height, data}, and what more(img) adds.
  _image(h, more) {
    const m = this.mod;
    try {
      const width = m._al_image_width(h), height = m._al_image_height(h), px = m._al_image_pixels(h);
      const img = { width, height, data: new Uint8ClampedArray(m.HEAPU8.slice(px, px + width * height * 4).buffer) };
      if (more) more(img);
      return img;
    } finally {
      m._al_image_free(h);
    }
  }

  // [r, g, b] of a colormap ("Reds", "Blues", "viridis") at t in [0, 1].
  colormap(name, t) {
    const v = this._withStrings([name],
      (p) => this._check((e) => this.mod._al_colormap_rgb(p, t, e), (x) => x < 0, `unknown colormap ${name}`));
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
      this._check((e) => m._al_nadaraya_watson(py, pw, pq, nq, pk, pv, nk, w, e), (ok) => !ok,
        'nadaraya_watson failed');
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

// A model (al_model) and the page's translator on it (al_translator, limits above).
export class Model {
  constructor(al, handle) {
    this.al = al;
    this.h = handle;
    const m = al.mod;
    // al_model_kind: 0 transformer, 1 bahdanau, 2 lm (a language model: no translator, see
    // Generator below), 3 vit (a Vision Transformer: no translator, see Classifier below).
    this.kind = ['transformer', 'bahdanau', 'lm', 'vit'][m._al_model_kind(handle)] ?? 'transformer';
    this.numLayers = m._al_model_num_layers(handle);
    this.layers = this.kind === 'transformer' ? this.numLayers : 0;  // 0 for Bahdanau
    this.heads = this.numHeads = m._al_model_num_heads(handle);
    this.numSteps = m._al_model_num_steps(handle);
    this.numHiddens = m._al_model_num_hiddens(handle);
    this.maxTargetSteps = m._al_model_max_target_steps(handle);
    this.srcVocabSize = m._al_model_src_vocab_size(handle);
    this.tgtVocabSize = m._al_model_tgt_vocab_size(handle);
    this.weightBytes = m._al_model_weight_bytes(handle) >>> 0;
    this.isInt8 = !!m._al_model_is_int8(handle);
    this.tr = this.opts = 0;
    if (this.kind === 'lm' || this.kind === 'vit') {  // model.newGenerator(), model.newClassifier()
      this.maxSteps = 0;
      this.maxBeam = 0;
      this.workspaceBytes = 0;
      return;
    }
    // The translator's limits: up to 64 steps, beams up to 8 (fewer for target vocabularies
    // under 16 tokens: the Translator needs two target tokens per hypothesis).
    this.maxSteps = Math.min(this.maxTargetSteps, Math.max(this.numSteps, MAX_STEPS));
    this.maxBeam = Math.max(1, Math.min(MAX_BEAM, this.tgtVocabSize >> 1));
    const lim = m._malloc(20);  // al_limits: max_batch, max_beam, max_tgt_steps, max_input_bytes, device
    try {
      m.HEAP32.set([1, this.maxBeam, this.maxSteps, MAX_INPUT_BYTES, 0], lim >> 2);
      this.tr = al._check((e) => m._al_translator_new(handle, lim, e), (v) => !v, 'cannot make a translator');
    } finally {
      m._free(lim);
    }
    this.workspaceBytes = m._al_translator_workspace_bytes(this.tr) >>> 0;  // the Translator's buffers
    this.opts = m._malloc(20);  // al_decode_options, rewritten by every translate()
  }

  _live() {
    if (!this.h) throw new AttnliteError('the model was freed');
    return this.h;
  }

  // A metadata value of the file ('' when absent): attnlite.config, attnlite.license ...
  metadata(key) {
    const h = this._live(), m = this.al.mod;
    if (typeof key !== 'string') throw new TypeError(`metadata: the key must be a string, got ${typeName(key)}`);
    return this.al._withStrings([key], (p) => {
      const v = m._al_model_metadata(h, p);
      return v ? m.UTF8ToString(v) : '';
    });
  }

  // The words of a sentence as the book's preprocessing splits them (al_tokenize).
  tokenize(sentence) {
    this._live();
    return this.al.tokenize(sentence);
  }

  // Greedy translation as the book's predict_seq2seq, or beam search. options.d2lCompat:
  // the book's position-0-at-every-step decoding; options.maxSteps: 0 = the model's
  // num_steps, up to model.maxSteps; options.attention: false skips the attention weights
  // (result.attention is then null); options.beam: beam size, 1 (greedy, the default) to
  // model.maxBeam (8); options.alpha: length penalty in [0, 2] (default 0), hypotheses are
  // ranked by logp / length^alpha. result.nbest lists the hypotheses best first (one for
  // greedy); the rest of the result (text, tokens, probs, steps, eos, attention) is the
  // best one. result.scores is the same array as result.probs (its name before the C API).
  translate(sentence, options) {
    const h = this._live();
    const m = this.al.mod;
    text(this.al, sentence, 'translate');
    options = optionsOf(options, 'translate');
    if (!this.tr)
      throw new AttnliteError(this.kind === 'vit'
        ? 'this is a Vision Transformer: it classifies images (model.newClassifier()), it does not translate'
        : 'this is a language model: it continues French text (model.newGenerator()), it does not translate');
    const withAttention = options.attention !== false;
    const beam = options.beam ?? 1, alpha = options.alpha ?? 0, maxSteps = options.maxSteps ?? 0;
    if (!Number.isInteger(beam))
      throw new AttnliteError(`beam size must be an integer in [1, ${this.maxBeam}], got ${beam}`);
    if (typeof alpha !== 'number')
      throw new AttnliteError(`length penalty alpha must be a number in [0, 2], got ${alpha}`);
    if (!(maxSteps >= 0 && maxSteps <= this.maxSteps))
      throw new AttnliteError(`max steps must be in [0, ${this.maxSteps}], got ${maxSteps}`);
    if (beam < 1 || beam > this.maxBeam)
      throw new AttnliteError(`beam size must be in [1, ${this.maxBeam}], got ${beam}`);
    if (!(alpha >= 0 && alpha <= MAX_ALPHA))  // NaN fails too
      throw new AttnliteError(`length penalty alpha must be a number in [0, 2], got ${g(alpha)}`);
    // al_decode_options: d2l_compat, max_steps (0 would be the translator's 64), attention,
    // beam_size, length_penalty.
    m.HEAP32.set([options.d2lCompat ? 1 : 0, maxSteps || this.numSteps, withAttention ? 1 : 0, beam],
      this.opts >> 2);
    m.HEAPF32[(this.opts >> 2) + 4] = alpha;
    const tr = this.tr;
    const status = this.al._withStrings([sentence], (p) => m._al_translate(tr, p, this.opts));
    if (status !== 0) throw new AttnliteError(m.UTF8ToString(m._al_translator_error(tr)) || 'translation failed');
    const res = m._al_translator_result(tr, 0);
    const n = m._al_result_num_tokens(res), steps = m._al_result_steps(res);
    const S = m._al_result_src_size(res), ld = m._al_result_ld(res);
    const L = m._al_result_layers(res), NH = m._al_result_heads(res);
    const ids = m._al_result_tokens(res) >> 2, pr = m._al_result_probs(res) >> 2;
    const sids = m._al_result_src_ids(res) >> 2;
    const r = {
      text: m.UTF8ToString(m._al_result_text(res)),
      tokenIds: m.HEAP32.slice(ids, ids + n),
      probs: m.HEAPF32.slice(pr, pr + n),
      srcIds: m.HEAP32.slice(sids, sids + S),
      steps, eos: !!m._al_result_eos(res), srcLen: m._al_result_src_len(res),
      srcValid: m._al_result_src_valid(res), truncated: !!m._al_result_truncated(res),
      numUnknown: m._al_result_num_unknown(res), layers: L, heads: NH, S,
      model: this.kind, positions: options.d2lCompat ? 'd2l' : 'step', beam, alpha,
    };
    r.scores = r.probs;
    const token = (id) => m.UTF8ToString(m._al_model_tgt_token(h, id));
    r.tokens = Array.from(r.tokenIds, token);
    r.srcTokens = Array.from(r.srcIds, (id) => m.UTF8ToString(m._al_model_src_token(h, id)));
    // The words as the book's preprocessing splits them, and those the model lacks (<unk> = 0).
    r.srcWords = this.tokenize(sentence);
    r.unknown = r.srcWords.filter((w) => this.al._withStrings([w], (p) => m._al_model_src_id(h, p)) === 0);
    r.nbest = [];
    for (let k = 0, nb = m._al_nbest_size(res); k < nb; ++k) {
      const nt = m._al_nbest_num_tokens(res, k), tp = m._al_nbest_tokens(res, k) >> 2;
      const pp = m._al_nbest_probs(res, k) >> 2;
      const tokenIds = m.HEAP32.slice(tp, tp + nt);
      r.nbest.push({
        text: m.UTF8ToString(m._al_nbest_text(res, k)),
        score: m._al_nbest_score(res, k), logp: m._al_nbest_logp(res, k),
        length: m._al_nbest_length(res, k), eos: !!m._al_nbest_eos(res, k),
        tokenIds, tokens: Array.from(tokenIds, token), probs: m.HEAPF32.slice(pp, pp + nt),
      });
    }
    if (!withAttention) {
      r.attention = null;
      return r;
    }
    // Attention: copies out of the translator's buffers (layouts of al_result_enc_self etc.).
    const F32 = m.HEAPF32;
    const enc = m._al_result_enc_self(res) >> 2, dec = m._al_result_dec_self(res) >> 2,
      cr = m._al_result_cross(res) >> 2;
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

  // A language model's generator (al_generator_new); see Generator.
  newGenerator() {
    return new Generator(this);
  }

  // A Vision Transformer's classifier (al_classifier_new); see Classifier.
  newClassifier() {
    return new Classifier(this);
  }

  // The target vocabulary as an array of strings (id -> token; al_model_tgt_token), read once.
  get vocab() {
    const h = this._live(), m = this.al.mod;
    if (!this._vocab) {
      this._vocab = Array.from({ length: this.tgtVocabSize }, (_, id) => m.UTF8ToString(m._al_model_tgt_token(h, id)));
    }
    return this._vocab;
  }

  // al_translator_free + al_model_free.
  free() {
    if (!this.h) return;
    const m = this.al.mod;
    m._al_translator_free(this.tr);
    m._al_model_free(this.h);
    m._free(this.opts);
    this.h = this.tr = this.opts = 0;
  }
}

// ---- language models ---------------------------------------------------------------------
// A Generator continues French text with a model of kind 'lm' (al_generator_*; the rules,
// the sampling formula and the perplexity formula are in include/attnlite/generate.h).
//
//   const lm = al.loadModel(bytes);                  // models/lm-fra.safetensors: lm.kind 'lm'
//   const g = new Generator(lm);                      // or lm.newGenerator(); al_generator_new
//   g.generate('je').text                             // 'je ne suis pas en train de pleurer .'
//   g.start('nous allons', { sample: true, temperature: 0.8, topK: 40, seed: 3 });
//   while (!g.done) g.step();                         // one token per call
//   g.continuation, g.tokens, g.probs, g.attention    // the generation so far
//   g.score('je suis là .')                           // { nll, tokens, scored, perplexity }
//   g.free();
//
// Options (all optional): maxTokens (integer >= 0; 0, the default: until <eos> or the
// context is full), sample (false: greedy; it defaults to true when any of temperature,
// topK, topP or seed is given), temperature (> 0, default 1), topK (integer >= 0; 0, the
// default: no cut), topP (in (0, 1], default 1: no cut), seed (the SplitMix64 seed, a uint64:
// a Number that is an integer in [0, 2^53 - 1] or a BigInt in [0, 2^64 - 1]; default 0),
// attention (default true: record the causal attention weights).
//
// Getters read the generation so far from WASM memory and copy it (tokenIds, probs,
// attention ...); the generation stays in the C side until the next start/step/generate/
// score. attentionView() is the one exception: a view of the module's memory, valid only
// until the next call (and any memory growth).
const U64_MAX = (1n << 64n) - 1n;
const OPTS_BYTES = 40;  // sizeof(al_generate_options) in wasm32 (static_assert in bindings.cpp)

// The seed as a BigInt in [0, 2^64 - 1], or an AttnliteError.
function seedOf(seed) {
  const bad = () => new AttnliteError('seed must be an integer in [0, 2^64 - 1] (a Number up to 2^53 - 1 or a BigInt), ' +
    `got ${typeof seed === 'bigint' ? `${seed}n` : typeof seed === 'string' ? JSON.stringify(seed) : String(seed)}`);
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed > U64_MAX) throw bad();
    return seed;
  }
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) throw bad();
  return BigInt(seed);
}

export class Generator {
  // al_generator_new(model, AL_DEVICE_CPU, &err); a model that is not a language model is the
  // library's error.
  constructor(model) {
    const al = model.al, m = al.mod;
    const mh = model._live();
    this.al = al;
    this.model = model;
    this.h = al._check((e) => m._al_generator_new(mh, 0, e), (v) => !v, 'cannot make a generator');
    this.vocab = model.vocab;                                        // id -> token
    this.unkId = this.vocab.indexOf('<unk>');
    this.context = m._al_generator_context(this.h);                  // positions the model reads
    this.workspaceBytes = m._al_generator_workspace_bytes(this.h) >>> 0;
    this.opts = m._malloc(OPTS_BYTES);  // al_generate_options, rewritten by every start()
    this.prompt = '';
    this.options = null;
  }

  _live() {
    if (!this.h) throw new AttnliteError('the generator was freed');
    return this.h;
  }

  // Checks options and writes them into this.opts (al_generate_options); returns the options
  // as used. The messages name the option and its range.
  _writeOptions(o, call) {
    o = optionsOf(o, call);
    const given = (k) => o[k] !== undefined && o[k] !== null;
    const sample = given('sample') ? !!o.sample : ['temperature', 'topK', 'topP', 'seed'].some(given);
    const maxTokens = given('maxTokens') ? o.maxTokens : 0;
    const temperature = given('temperature') ? o.temperature : 1;
    const topK = given('topK') ? o.topK : 0;
    const topP = given('topP') ? o.topP : 1;
    if (!Number.isInteger(maxTokens) || maxTokens < 0)
      throw new AttnliteError(`max tokens must be an integer >= 0 (0: until <eos> or the context is full), got ${maxTokens}`);
    if (typeof temperature !== 'number' || !(temperature > 0) || !Number.isFinite(temperature))
      throw new AttnliteError(`temperature must be a number > 0, got ${typeof temperature === 'number' ? g(temperature) : temperature}`);
    if (!Number.isInteger(topK) || topK < 0)
      throw new AttnliteError(`top-k must be an integer >= 0 (0: no cut), got ${topK}`);
    if (typeof topP !== 'number' || !(topP > 0 && topP <= 1))
      throw new AttnliteError(`top-p must be a number in (0, 1], got ${typeof topP === 'number' ? g(topP) : topP}`);
    const seed = seedOf(given('seed') ? o.seed : 0);
    const attention = o.attention !== false;
    const m = this.al.mod, p = this.opts >> 2;
    // max_tokens, sample, temperature, top_k, top_p, (padding), seed (uint64 at byte 24), attention
    m.HEAP32[p] = Math.min(maxTokens, 0x7fffffff);
    m.HEAP32[p + 1] = sample ? 1 : 0;
    m.HEAPF32[p + 2] = temperature;
    m.HEAP32[p + 3] = Math.min(topK, 0x7fffffff);
    m.HEAPF32[p + 4] = topP;
    m.HEAP32[p + 5] = 0;
    m.HEAPU32[p + 6] = Number(seed & 0xffffffffn);
    m.HEAPU32[p + 7] = Number(seed >> 32n);
    m.HEAP32[p + 8] = attention ? 1 : 0;
    m.HEAP32[p + 9] = 0;
    return { maxTokens, sample, temperature, topK, topP, seed, attention };
  }

  _call(fn) {  // a C call returning al_status; a failure throws al_generator_error's message
    const status = fn();
    if (status !== 0) throw new AttnliteError(this.al.mod.UTF8ToString(this.al.mod._al_generator_error(this.h)) || 'generation failed');
    return this;
  }

  // Reads the prompt and chooses the first token (al_generator_start). Returns this.
  start(prompt, options) {
    const h = this._live(), m = this.al.mod;
    text(this.al, prompt, 'start', 'prompt');
    const used = this._writeOptions(options, 'start');
    this.prompt = '';
    this.options = null;
    this._call(() => this.al._withStrings([prompt], (p) => m._al_generator_start(h, p, this.opts)));
    this.prompt = prompt;
    this.options = used;
    return this;
  }

  // Feeds the last token back and chooses the next one (al_generator_step); nothing happens
  // once done. Returns this.
  step() {
    const h = this._live();
    return this._call(() => this.al.mod._al_generator_step(h));
  }

  // The whole generation (al_generate): start, then step until done. Returns this.
  generate(prompt, options) {
    const h = this._live(), m = this.al.mod;
    text(this.al, prompt, 'generate', 'prompt');
    const used = this._writeOptions(options, 'generate');
    this.prompt = '';
    this.options = null;
    this._call(() => this.al._withStrings([prompt], (p) => m._al_generate(h, p, this.opts)));
    this.prompt = prompt;
    this.options = used;
    return this;
  }

  // -log p of one sentence under the model (al_generator_score): { nll, tokens, scored,
  // perplexity = exp(nll / tokens) }; scored false (perplexity NaN) for a sentence that is
  // empty or longer than context - 1 words. It ends the current generation.
  score(sentence) {
    const h = this._live(), m = this.al.mod;
    text(this.al, sentence, 'score');
    const p = m._malloc(16);  // double nll, long tokens (4 bytes in wasm32), int scored
    try {
      m.HEAPF64[p >> 3] = 0;
      m.HEAP32[(p >> 2) + 2] = 0;
      m.HEAP32[(p >> 2) + 3] = 0;
      this.prompt = '';
      this.options = null;
      this._call(() => this.al._withStrings([sentence], (s) => m._al_generator_score(h, s, p, p + 8, p + 12)));
      const nll = m.HEAPF64[p >> 3], tokens = m.HEAP32[(p >> 2) + 2], scored = m.HEAP32[(p >> 2) + 3] === 1;
      return { nll, tokens, scored, perplexity: scored && tokens ? Math.exp(nll / tokens) : NaN };
    } finally {
      m._free(p);
    }
  }

  // The perplexity of several sentences together: exp(summed nll / summed tokens), with the
  // counts of sentences scored and skipped.
  perplexity(sentences) {
    this._live();
    if (!Array.isArray(sentences))
      throw new TypeError(`perplexity: sentences must be an array of strings, got ${typeName(sentences)}`);
    let nll = 0, tokens = 0, scored = 0, skipped = 0;
    for (const s of sentences) {
      const r = this.score(s);
      nll += r.nll;
      tokens += r.tokens;
      if (r.scored) ++scored;
      else ++skipped;
    }
    return { perplexity: tokens ? Math.exp(nll / tokens) : NaN, nll, tokens, sentences: scored, skipped };
  }

  // ---- the generation so far (al_generation_*): 0, '', empty arrays before any ----
  get text() { return this.al.mod.UTF8ToString(this.al.mod._al_generation_text(this._live())); }
  get continuation() { return this.al.mod.UTF8ToString(this.al.mod._al_generation_continuation(this._live())); }
  get numTokens() { return this.al.mod._al_generation_num_tokens(this._live()); }
  get numPrompt() { return this.al.mod._al_generation_num_prompt(this._live()); }
  get numGenerated() { return this.al.mod._al_generation_num_generated(this._live()); }
  get numUnknown() { return this.al.mod._al_generation_num_unknown(this._live()); }
  get eos() { return !!this.al.mod._al_generation_eos(this._live()); }
  get done() { return !!this.al.mod._al_generation_done(this._live()); }
  get layers() { return this.al.mod._al_generation_layers(this._live()); }
  get heads() { return this.al.mod._al_generation_heads(this._live()); }
  get ld() { return this.al.mod._al_generation_ld(this._live()); }
  // Positions the model has read: <bos>, the prompt and the tokens fed back (the last token
  // chosen is read at the next step, so it has no row yet).
  get positions() { return this.al.mod._al_generation_positions(this._live()); }
  // Ids of <bos>, the prompt words and the generated tokens (with <eos> when it came).
  get tokenIds() {
    const m = this.al.mod, n = m._al_generation_num_tokens(this._live()), p = m._al_generation_tokens(this.h) >> 2;
    return n && p ? m.HEAP32.slice(p, p + n) : new Int32Array(0);
  }
  get tokens() { return Array.from(this.tokenIds, (id) => this.vocab[id] ?? ''); }
  // softmax probability (temperature 1, before any cut) of each generated token.
  get probs() {
    const m = this.al.mod, n = m._al_generation_num_generated(this._live()), p = m._al_generation_probs(this.h) >> 2;
    return n && p ? m.HEAPF32.slice(p, p + n) : new Float32Array(0);
  }
  // The prompt words the vocabulary lacks (read as <unk>), as preprocessed.
  get unknown() {
    if (!this.numUnknown) return [];
    const ids = this.tokenIds;
    return this.al.tokenize(this.prompt).filter((w, i) => ids[1 + i] === this.unkId);
  }

  // The causal self-attention weights (L, NH, ld, ld), row-major [l][h][q][k]: query position
  // q attends to key position k <= q (0 above the diagonal); rows q < positions hold data.
  // A copy (null when not recorded).
  get attention() {
    const v = this.attentionView();
    return v ? v.slice() : null;
  }

  // The same as a Float32Array view of WASM memory: no copy, valid until the next call.
  attentionView() {
    const m = this.al.mod, a = m._al_generation_attention(this._live()) >> 2;
    if (!a) return null;
    const L = m._al_generation_layers(this.h), NH = m._al_generation_heads(this.h), ld = m._al_generation_ld(this.h);
    return m.HEAPF32.subarray(a, a + L * NH * ld * ld);
  }

  // Layer l, head h as a positions x positions copy (row-major), or null when not recorded.
  attentionAt(l, h) {
    const v = this.attentionView();
    if (!v) return null;
    const L = this.layers, NH = this.heads, ld = this.ld, P = this.positions;
    if (!(Number.isInteger(l) && l >= 0 && l < L && Number.isInteger(h) && h >= 0 && h < NH))
      throw new AttnliteError(`attention: layer must be in [0, ${L - 1}] and head in [0, ${NH - 1}], got ${l}, ${h}`);
    const out = new Float32Array(P * P), base = (l * NH + h) * ld * ld;
    for (let q = 0; q < P; ++q) out.set(v.subarray(base + q * ld, base + q * ld + P), q * P);
    return out;
  }

  // Everything above at once, copied: what the generation is now.
  result() {
    const att = this.attention;
    return {
      prompt: this.prompt, text: this.text, continuation: this.continuation, tokens: this.tokens,
      tokenIds: this.tokenIds, probs: this.probs, numTokens: this.numTokens, numPrompt: this.numPrompt,
      numGenerated: this.numGenerated, numUnknown: this.numUnknown, unknown: this.unknown, eos: this.eos,
      done: this.done, layers: this.layers, heads: this.heads, ld: this.ld, positions: this.positions,
      attention: att, options: this.options ? { ...this.options } : null,
    };
  }

  // al_generator_free (the model may be freed before or after).
  free() {
    if (!this.h) return;
    this.al.mod._al_generator_free(this.h);
    this.al.mod._free(this.opts);
    this.h = this.opts = 0;
  }
}

// ---- Vision Transformers -------------------------------------------------------------------
// A Classifier labels images with a model of kind 'vit' (al_classifier_*, al_classification_*;
// include/attnlite/classify.h), one image at a time.
//
//   const vit = al.loadModel(bytes);                   // models/vit-digits.safetensors: 'vit'
//   const c = new Classifier(vit);                     // or vit.newClassifier()
//   const x = al.digitFromRgba(ctx.getImageData(0, 0, w, h));   // 8x8 in 0..16
//   const r = c.classify(x);                           // { label, name, prob, probs, ... }
//   c.attention(l)                                     // Float32Array (NH, T, T), [h][q][k]
//   c.rollout()                                        // Float32Array (T, T): row 0 is CLS's
//   c.free();
//
// Tokens: T = patches + 1, CLS first, then the patches row-major. The classification lives in
// the C classifier until the next classify(); attention() and rollout() read it and copy.
export class Classifier {
  constructor(model) {
    const al = model.al, m = al.mod;
    const mh = model._live();
    this.al = al;
    this.model = model;
    this.h = al._check((e) => m._al_classifier_new(mh, 0, e), (v) => !v, 'cannot make a classifier');
    this.imageSize = m._al_classifier_image_size(this.h);   // S: images are C x S x S
    this.channels = m._al_classifier_channels(this.h);
    this.numClasses = m._al_classifier_num_classes(this.h);
    this.tokens = m._al_classifier_tokens(this.h);          // T = patches + 1
    this.labels = Array.from({ length: this.numClasses }, (_, k) => m.UTF8ToString(m._al_classifier_label(this.h, k)));
    this.inputSize = this.channels * this.imageSize * this.imageSize;
    this.image = m._malloc(this.inputSize * 4);
  }

  _live() {
    if (!this.h) throw new AttnliteError('the classifier was freed');
    return this.h;
  }

  _error(fallback) {
    return new AttnliteError(this.al.mod.UTF8ToString(this.al.mod._al_classifier_error(this.h)) || fallback);
  }

  // image: C x S x S numbers (the model's pixel values: 0..16 for the digits); options.attention
  // (default true) records the attention weights for attention() and rollout().
  // Returns { label, name, prob, probs (Float32Array numClasses), layers, heads, tokens }.
  classify(image, options) {
    const h = this._live(), m = this.al.mod;
    options = optionsOf(options, 'classify');
    if (!image || typeof image.length !== 'number')
      throw new AttnliteError(`classify needs ${this.inputSize} pixel values (an array or Float32Array)`);
    if (image.length !== this.inputSize)
      throw new AttnliteError(`classify: ${image.length} pixel values, the model reads ${this.channels} x ${this.imageSize} x ${this.imageSize} = ${this.inputSize}`);
    m.HEAPF32.set(image, this.image >> 2);
    if (m._al_classify(h, this.image, options.attention === false ? 0 : 1) !== 0) throw this._error('classification failed');
    return this.result();
  }

  // The last classification (null before any or after a failure).
  result() {
    const h = this._live(), m = this.al.mod;
    const label = m._al_classification_label(h);
    if (label < 0) return null;
    const p = m._al_classification_probs(h) >> 2;
    return {
      label, name: this.labels[label] ?? String(label), prob: m._al_classification_prob(h),
      probs: m.HEAPF32.slice(p, p + this.numClasses),
      layers: m._al_classification_layers(h), heads: m._al_classification_heads(h), tokens: this.tokens,
    };
  }

  get layers() { return this.al.mod._al_classification_layers(this._live()); }
  get heads() { return this.al.mod._al_classification_heads(this._live()); }

  // Layer l's attention weights (NH, T, T), [h][q][k], a copy; null when the last
  // classification did not record them.
  attention(layer) {
    const h = this._live(), m = this.al.mod, L = m._al_classification_layers(h);
    if (L === 0)
      throw new AttnliteError('attention: there is no classification to read (none yet, or the last one failed)');
    if (!(Number.isInteger(layer) && layer >= 0 && layer < L))
      throw new AttnliteError(`attention: layer must be an integer in [0, ${L - 1}], got ${layer}`);
    const a = m._al_classification_attention(h, layer) >> 2;
    if (!a) return null;
    const T = this.tokens, n = m._al_classification_heads(h) * T * T;
    return m.HEAPF32.slice(a, a + n);
  }

  // The attention rollout (T, T) of the last classification (classify.h: the heads' mean per
  // layer, plus the identity, rows normalised, multiplied through the layers); row 0 is the
  // CLS token's attention over CLS and the patches.
  rollout() {
    const h = this._live(), m = this.al.mod, T = this.tokens;
    const out = m._malloc(T * T * 4);
    try {
      if (m._al_classification_rollout(h, out) !== 0) throw this._error('rollout failed');
      return m.HEAPF32.slice(out >> 2, (out >> 2) + T * T);
    } finally {
      m._free(out);
    }
  }

  // al_classifier_free (the model may be freed before or after).
  free() {
    if (!this.h) return;
    this.al.mod._al_classifier_free(this.h);
    this.al.mod._free(this.image);
    this.h = this.image = 0;
  }
}

export default Attnlite;
