// attnlite JS API: the figure renderer, the second WASM module (attnlite-figures.mjs + .wasm,
// built from src/render/ and wasm/figures_bindings.cpp). Attnlite.create loads it beside the
// runtime (unless figures: false) and its renderHeatmap, renderPlot and colormap call it here;
// the runtime module has no renderer.
import { AttnliteError, STYLES, checked, typeName } from './checks.mjs';

// An Emscripten module from its factory: options.factory, options.module (a compiled
// WebAssembly.Module), options.binary (the .wasm bytes) or, in node, the .wasm file beside the
// API (the glue would try fetch() on a file: URL). what names the options in messages:
// { module: 'wasmModule', wasm: '../attnlite.wasm', glue: '../attnlite.mjs' }.
export async function instantiate(o, what) {
  if (o.module && !(o.module instanceof WebAssembly.Module))
    throw new TypeError(`Attnlite.create: ${what.module} must be a WebAssembly.Module, got ${typeName(o.module)}`);
  const factory = o.factory ?? (await import(new URL(what.glue, import.meta.url))).default;
  const args = {};
  let failed = null;
  if (o.module) {
    const wasm = o.module;
    failed = new Promise((_, reject) => {
      args.instantiateWasm = (imports, done) => {
        WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm), reject);
        return {};  // the exports come later, through done
      };
    });
  } else if (o.binary) {
    args.wasmBinary = o.binary;
  } else if (!o.factory && typeof process === 'object' && process.versions?.node) {
    const { readFile } = await import('node:fs/promises');
    args.wasmBinary = await readFile(new URL(what.wasm, import.meta.url));
  }
  if (o.locateFile) args.locateFile = o.locateFile;
  return failed ? Promise.race([factory(args), failed]) : factory(args);
}

export const FIGURES = { module: 'figuresModule', wasm: '../attnlite-figures.wasm', glue: '../attnlite-figures.mjs' };

// The renderer over its module: what Attnlite's figure methods call. Its memory is its own:
// inputs are copied in, images copied out and freed.
export class Figures {
  constructor(mod) {
    this.mod = mod;
  }

  heapUsed() { return this.mod._al_heap_used() >>> 0; }  // bytes this module's allocator has handed out

  // fn(errp) calls a C function with an al_error** out-parameter (checks.mjs, checked).
  _check(fn, failed, fallback) { return checked(this.mod, fn, failed, fallback); }

  _floats(arr) {  // a copy of a float array in WASM memory
    const p = this.mod._malloc(Math.max(4, arr.length * 4));
    this.mod.HEAPF32.set(arr, p >> 2);
    return p;
  }

  _withStrings(strings, fn) {
    const m = this.mod;
    const ptrs = strings.map((s) => {
      const n = m.lengthBytesUTF8(s) + 1;
      const p = m._malloc(n);
      m.stringToUTF8(s, p, n);
      return p;
    });
    try {
      return fn(...ptrs);
    } finally {
      ptrs.forEach((p) => m._free(p));
    }
  }

  // Checks that matrices holds rows x cols matrices of queries x keys values (call names the
  // method in the messages).
  _checkMatrices(call, matrices, rows, cols, queries, keys) {
    if (!(queries > 0 && keys > 0)) throw new AttnliteError(`${call} needs queries and keys`);
    if (matrices.length !== rows * cols * queries * keys)
      throw new AttnliteError(`${call}: ${matrices.length} values for ${rows}x${cols}x${queries}x${keys}`);
  }

  // matrices: Float32Array (rows, cols, queries, keys). Returns {width, height, data, layout}
  // (data: Uint8ClampedArray RGBA, ready for new ImageData(data, width, height)).
  renderHeatmap(matrices, o = {}) {
    const rows = o.rows ?? 1, cols = o.cols ?? 1;
    const queries = o.queries, keys = o.keys;
    this._checkMatrices('renderHeatmap', matrices, rows, cols, queries, keys);
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
      return this._image(h, (img) => this._layout(h, img));
    } finally {
      m._free(pm);
    }
  }

  // One translation's attention map laid out as the CLI's `attnlite heatmap translate` draws
  // it (the same code: src/render/translation_figure.cpp): matrices Float32Array (layers, heads,
  // queries, keys) and options kind ('enc' | 'dec' | 'cross'), layers and heads (0-based
  // numbers of the rows and columns), queries, keys, transformer (default true), model,
  // sentence, translation, xticks and yticks (the keys' and queries' tokens; none: positions),
  // cmap, dpi, annotate. Returns {width, height, data, layout} as renderHeatmap does.
  renderTranslationMap(matrices, o = {}) {
    const layers = o.layers ?? [0], heads = o.heads ?? [0];
    const rows = layers.length, cols = heads.length, queries = o.queries, keys = o.keys;
    const kind = { enc: 0, dec: 1, cross: 2 }[o.kind ?? 'cross'];
    if (kind === undefined) throw new AttnliteError(`renderTranslationMap: kind must be enc, dec or cross, got ${o.kind}`);
    if (!(rows > 0 && cols > 0)) throw new AttnliteError('renderTranslationMap needs at least one layer and one head');
    this._checkMatrices('renderTranslationMap', matrices, rows, cols, queries, keys);
    const m = this.mod;
    const pm = this._floats(matrices);
    const pl = m._malloc(4 * (rows + cols));
    m.HEAP32.set(Int32Array.from(layers), pl >> 2);
    m.HEAP32.set(Int32Array.from(heads), (pl >> 2) + rows);
    try {
      const h = this._withStrings(
        [o.model ?? 'transformer', o.sentence ?? '', o.translation ?? '', (o.xticks ?? []).join('\n'),
          (o.yticks ?? []).join('\n'), o.cmap ?? 'Reds'],
        (mn, se, tr, xt, yt, cm) => this._check((e) => m._al_render_translation_map(pm, rows, cols, queries, keys,
          o.transformer === false ? 0 : 1, kind, pl, pl + 4 * rows, mn, se, tr, xt, yt, cm, o.dpi ?? 100,
          o.annotate ? 1 : 0, e), (v) => !v, 'cannot render the translation map'));
      return this._image(h, (img) => this._layout(h, img));
    } finally {
      m._free(pm);
      m._free(pl);
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

  // img.layout: the heatmap layout of the al_image h.
  _layout(h, img) {
    const m = this.mod, p = m._al_image_layout(h) >> 2, n = m._al_image_layout_size(h);
    img.layout = new HeatmapLayout(m.HEAP32.slice(p, p + n), m._al_image_vmin(h), m._al_image_vmax(h));
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
