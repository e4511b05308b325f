// attnlite JS API: Attnlite, the loaded WASM modules (the runtime: tokenizer, digits, models;
// the figure renderer of figures.mjs) and, from figures.mjs, HeatmapLayout, where a rendered
// heatmap's cells are.
import { AttnliteError, MAX_BEAM, batchSize, checked, optionsOf, sizeOption, typeName, words, text } from './checks.mjs';
import { FIGURES, Figures, HeatmapLayout, instantiate } from './figures.mjs';
import { Model } from './model.mjs';

export { HeatmapLayout };

const RUNTIME = { module: 'wasmModule', wasm: '../attnlite.wasm', glue: '../attnlite.mjs' };

export class Attnlite {
  // options.factory: the Emscripten module factory (default: import attnlite.mjs next to
  // attnlite-api.mjs); options.wasmBinary: the .wasm bytes (skips fetching them, e.g. in node);
  // options.wasmModule: a compiled WebAssembly.Module of them (compiled once, instantiated as
  // often as wanted: in the page and in its workers). options.locateFile goes to both modules.
  // The figure renderer (attnlite-figures.mjs + .wasm) loads in parallel with the runtime, with
  // the same kinds of options: figuresFactory, figuresBinary, figuresModule; figures: false
  // skips it (renderHeatmap, renderPlot and colormap then throw), as the translation worker,
  // which never draws, does.
  static async create(options = {}) {
    const runtime = instantiate({ factory: options.factory, module: options.wasmModule,
      binary: options.wasmBinary, locateFile: options.locateFile }, RUNTIME);
    const figures = options.figures === false ? null : instantiate({ factory: options.figuresFactory,
      module: options.figuresModule, binary: options.figuresBinary, locateFile: options.locateFile }, FIGURES);
    figures?.catch(() => {});  // reported below, after the runtime's own failure if any
    const mod = await runtime;
    return new Attnlite(mod, figures ? new Figures(await figures) : null);
  }

  // mod: the runtime's Emscripten module; figures: a Figures over the renderer's, or null.
  constructor(mod, figures = null) {
    this.mod = mod;
    this.figures = figures;
  }

  // The kernels in use (al_kernels): 'scalar', or the SIMD table's name when the build has them.
  get backend() { return this.mod.UTF8ToString(this.mod._al_kernels()); }
  // 'scalar' or 'simd' (al_use_kernels; an AttnliteError when this build has no SIMD kernels).
  setBackend(name) {
    if (name !== 'scalar' && name !== 'simd') throw new AttnliteError(`unknown backend ${name}`);
    this._withStrings([name], (p) =>
      this._check((e) => this.mod._al_use_kernels(p, e), (st) => st !== 0, 'cannot switch kernels'));
  }

  // ---- memory helpers ----
  get heapSize() { return this.mod.HEAP8.length; }       // bytes of WASM memory
  heapUsed() { return this.mod._al_heap_used() >>> 0; }  // bytes the allocator has handed out

  // fn(errp) calls a C function with an al_error** out-parameter (checks.mjs, checked).
  _check(fn, failed, fallback) { return checked(this.mod, fn, failed, fallback); }

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
    const ptrs = [];
    try {
      for (const s of strings) ptrs.push(this._str(s));
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

  // The sentences of a text, as `attnlite translate` cuts a text before it translates each
  // sentence alone (al_split_sentences; include/attnlite/sentences.h: after . ! ? and a space,
  // not after "Mr." and the like), without the spaces between them: "I'm home. Mr. Smith is
  // here!  ok" -> ["I'm home.", 'Mr. Smith is here!', 'ok']; [] for a blank text. A text has no
  // length limit (a sentence has: MAX_INPUT_BYTES).
  splitSentences(textValue) {
    return this._sentences('splitSentences', textValue, (p, spans, cap, e) => this.mod._al_split_sentences(p, spans, cap, e));
  }

  // The text cut at the spans that call(textPointer, spans, cap, errorOut) writes (an
  // al_*sentences function: first counted, then written); `what` names the caller in errors.
  _sentences(what, textValue, call) {
    if (typeof textValue !== 'string') throw new TypeError(`${what}: the text must be a string, got ${typeName(textValue)}`);
    if (textValue.includes('\0')) throw new AttnliteError(`${what}: the text contains a NUL character`);
    const m = this.mod;
    return this._withStrings([textValue], (p) => {
      const n = this._check((e) => call(p, 0, 0, e), (v) => v < 0, 'cannot split sentences');
      if (n === 0) return [];
      const spans = m._malloc(n * 8);  // n pairs of 32-bit size_t
      try {
        call(p, spans, n, 0);
        const at = m.HEAPU32.subarray(spans >> 2, (spans >> 2) + 2 * n);
        const out = [];
        for (let k = 0; k < n; ++k) out.push(m.UTF8ToString(p + at[2 * k], at[2 * k + 1] - at[2 * k]));
        return out;
      } finally {
        m._free(spans);
      }
    });
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

  // digitFromFileBytes: an image file's bytes (PNG, BMP, GIF; al_digit_from_file_bytes). The
  // WebAssembly module has no JPEG decoder: JPEG bytes are refused with an error that says so
  // (decode them with the browser, e.g. on a canvas, and use digitFromRgba).
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
  // A model from a .safetensors file's bytes, with the translator of a translation model
  // (Model: options.maxBatch, options.maxBeam size its buffers).
  loadModel(bytes, options) {
    options = optionsOf(options, 'loadModel');
    batchSize(options, 'loadModel');  // checked before the bytes are copied (Model: per kind)
    sizeOption(options, 'maxBeam', MAX_BEAM, 1, 'loadModel');
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw new AttnliteError('loadModel needs a Uint8Array or ArrayBuffer');
    const p = this.mod._malloc(Math.max(1, bytes.length));
    if (!p) throw new AttnliteError(`cannot load the model: no memory for ${bytes.length} bytes`);
    this.mod.HEAPU8.set(bytes, p);
    // The model takes the buffer over and uses its weights in place (freed with the model, or
    // at once when loading fails): one copy of the file in WebAssembly memory, not three.
    const h = this._check((e) => this.mod._al_model_adopt_bytes(p, bytes.length, e), (v) => !v,
      'cannot load the model');
    try {
      return new Model(this, h, options);
    } catch (e) {
      this.mod._al_model_free(h);
      throw e;
    }
  }

  // ---- figures (the renderer module, api/figures.mjs) ----
  // renderHeatmap(matrices, options): matrices Float32Array (rows, cols, queries, keys); returns
  // {width, height, data, layout} (data: Uint8ClampedArray RGBA, ready for new
  // ImageData(data, width, height); layout: a HeatmapLayout).
  renderHeatmap(matrices, o = {}) { return this._renderer('renderHeatmap').renderHeatmap(matrices, o); }
  // renderTranslationMap(matrices, options): one translation's attention map laid out as the
  // CLI's `attnlite heatmap translate` draws it (figures.mjs says the options); returns
  // {width, height, data, layout} as renderHeatmap does.
  renderTranslationMap(matrices, o = {}) { return this._renderer('renderTranslationMap').renderTranslationMap(matrices, o); }
  // renderPlot(series, options): series [{x, y, label, style: 'line'|'dashed'|'dashdot'|
  // 'dotted'|'points', color: [r,g,b]}]; options: xlabel, ylabel, xlim [lo, hi], ylim, width,
  // height (inches), dpi, legend. Returns {width, height, data}.
  renderPlot(series, o = {}) { return this._renderer('renderPlot').renderPlot(series, o); }
  // [r, g, b] of a colormap ("Reds", "Blues", "viridis") at t in [0, 1].
  colormap(name, t) { return this._renderer('colormap').colormap(name, t); }

  _renderer(call) {
    if (!this.figures)
      throw new AttnliteError(`${call}: this Attnlite was created without the figure renderer (figures: false)`);
    return this.figures;
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
