// What the page's sections share: element lookup, the screen's pixel density, selects of
// layers and heads, and the heatmap canvases (drawing a rendered figure, finding the cell under
// the pointer, the tooltip, the layer labels of an all-heads grid, the PNG download), and
// downloads with progress.

export const $ = (id) => document.getElementById(id);

// Sizes for the status lines: "408 KB", "3.1 MB".
export const kb = (n) => `${Math.round(n / 1024).toLocaleString('en')} KB`;
export const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;

// Figures are rendered at the screen's pixel density (1 or 2) and shown at CSS size.
export const scale = () => Math.min(2, Math.max(1, Math.round(window.devicePixelRatio || 1)));

// A select of n entries "Layer 1" ... "Layer n", showing value (clamped to the last).
export function fillSelect(sel, n, word, value) {
  if (sel.options.length !== n) {
    sel.textContent = '';
    for (let i = 0; i < n; ++i) sel.append(new Option(`${word} ${i + 1}`, String(i)));
  }
  sel.value = String(Math.min(value, n - 1));
}

// Puts a rendered image ({width, height, data}) on a canvas, shown at 1/s of its pixels.
export function putImage(canvas, img, s) {
  canvas.width = img.width;
  canvas.height = img.height;
  canvas.style.width = `${img.width / s}px`;
  canvas.style.height = `${img.height / s}px`;
  const ctx = canvas.getContext('2d');
  ctx.putImageData(new ImageData(img.data, img.width, img.height), 0, 0);
  return ctx;
}

// The panels of a figure: for every layer and head, q x k weights copied out of get(l, h), a
// row-major matrix with leading dimension ld; value(w, i, j) may replace a weight (masking).
export function gatherPanels(layers, heads, q, k, ld, get, value = (w) => w) {
  const mats = new Float32Array(layers.length * heads.length * q * k);
  const panels = [];
  let o = 0;
  for (const l of layers) {
    for (const h of heads) {
      const m = get(l, h);
      for (let i = 0; i < q; ++i) for (let j = 0; j < k; ++j) mats[o++] = value(m[i * ld + j], i, j);
      panels.push({ l, h });
    }
  }
  return { mats, panels, rows: layers.length, cols: heads.length };
}

// The cell of a drawn figure (fig: gatherPanels' fields plus q, k and the renderer's layout)
// under a pointer event on its canvas: { panel, l, h, q, k, w } or null.
export function cellUnder(e, canvas, fig) {
  const x = Math.floor((e.offsetX * canvas.width) / canvas.clientWidth);
  const y = Math.floor((e.offsetY * canvas.height) / canvas.clientHeight);
  const hit = fig.layout.cellAt(x, y);
  if (!hit) return null;
  const p = hit.row * fig.cols + hit.col;
  return { ...fig.panels[p], panel: p, q: hit.q, k: hit.k, w: fig.mats[(p * fig.q + hit.q) * fig.k + hit.k] };
}

// The tooltip beside the pointer: "query → key  value", kept inside the figure's box.
export function showTooltip(tip, e, canvas, box, query, key, value) {
  tip.innerHTML = '<span class="q"></span> → <span class="k"></span><b></b>';
  tip.querySelector('.q').textContent = query;
  tip.querySelector('.k').textContent = key;
  tip.querySelector('b').textContent = value;
  tip.hidden = false;
  const left = Math.min(canvas.offsetLeft + e.offsetX + 14, Math.max(0, box.clientWidth - tip.offsetWidth - 4));
  tip.style.left = `${left}px`;
  tip.style.top = `${canvas.offsetTop + e.offsetY + 14}px`;
}

// "Layer n" beside each row of an all-heads grid (none for a single panel).
export function layerLabels(container, box, all, layers, layout, cols, s) {
  container.textContent = '';
  box.classList.toggle('all', all);
  if (!all) return;
  layers.forEach((l, i) => {
    const P = layout.panels[i * cols];
    const d = document.createElement('div');
    d.textContent = `Layer ${l + 1}`;
    d.style.top = `${(P.y + P.h / 2) / s}px`;
    container.append(d);
  });
}

// Saves a canvas as a PNG file named name; onError gets a message when the browser cannot.
export function downloadCanvas(canvas, name, onError) {
  canvas.toBlob((blob) => {
    if (!blob) {
      onError('The browser could not encode the PNG.');
      return;
    }
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }, 'image/png');
}

// The response's bytes, reporting progress when the size is known.
export async function readAll(response, progress) {
  const total = Number(response.headers.get('content-length'));
  if (!response.body || !(total > 0)) return new Uint8Array(await response.arrayBuffer());
  const out = new Uint8Array(total);
  const reader = response.body.getReader();
  let got = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (got + value.length > total) return new Uint8Array(await new Blob([out.subarray(0, got), value]).arrayBuffer());
    out.set(value, got);
    got += value.length;
    progress(got, total);
  }
  return got === total ? out : out.subarray(0, got);
}
