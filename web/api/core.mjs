// attnlite JS API: Attnlite, the loaded WASM module (tokenizer, figures, digits, models) and
// HeatmapLayout, where a rendered heatmap's cells are.
import { AttnliteError, STYLES, words, typeName, text } from './checks.mjs';
import { Model } from './model.mjs';

export class Attnlite {
  // options.factory: the Emscripten module factory (default: import attnlite.mjs next to
  // attnlite-api.mjs); options.wasmBinary: the .wasm bytes (skips fetching them, e.g. in node);
  // options.wasmModule: a compiled WebAssembly.Module of them (compiled once, instantiated as
  // often as wanted: in the page and in its workers).
  static async create(options = {}) {
    const factory = options.factory ?? (await import(new URL('../attnlite.mjs', import.meta.url))).default;
    const args = {};
    let failed = null;
    if (options.wasmModule) {
      const wasm = options.wasmModule;
      if (!(wasm instanceof WebAssembly.Module))
        throw new TypeError(`Attnlite.create: wasmModule must be a WebAssembly.Module, got ${typeName(wasm)}`);
      failed = new Promise((_, reject) => {
        args.instantiateWasm = (imports, done) => {
          WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm), reject);
          return {};  // the exports come later, through done
        };
      });
    } else if (options.wasmBinary) {
      args.wasmBinary = options.wasmBinary;
    } else if (!options.factory && typeof process === 'object' && process.versions?.node) {
      // Node: read the .wasm beside attnlite-api.mjs (the glue would try fetch() on a file: URL).
      const { readFile } = await import('node:fs/promises');
      args.wasmBinary = await readFile(new URL('../attnlite.wasm', import.meta.url));
    }
    if (options.locateFile) args.locateFile = options.locateFile;
    return new Attnlite(await (failed ? Promise.race([factory(args), failed]) : factory(args)));
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
