// The language-model section's attention map: the causal self-attention of the generation
// shown (lm.snap), one head or every layer and head, the masked cells (a key after its query)
// hatched, a reading of the cell under the pointer or finger.
import { $, fillSelect, putImage, gatherPanels, cellUnder, showTooltip, layerLabels } from './ui.js';

export function syncMapControls(lm) {
  const s = lm.snap, v = lm.view;
  if (!s) return;
  fillSelect($('lm-layer'), s.layers, 'Layer', v.layer);
  fillSelect($('lm-head'), s.heads, 'Head', v.head);
  const fits = gridFits();
  const box = $('lm-all-heads');
  box.disabled = !fits;
  box.closest('label').title = fits ? 'Every layer and head at once' : 'All heads need a wider screen';
  $('lm-all-note').hidden = fits;
  if (!fits) v.all = false;
  box.checked = v.all;
  $('lm-layer').disabled = v.all;
  $('lm-head').disabled = v.all;
}

// Room for the figure: the width of the result area, in CSS pixels.
const room = () => Math.max(240, $('lm-result').clientWidth || 300);
// The all-heads grid: at least 110 px per panel, four heads side by side.
const gridFits = () => room() >= 150 + 4 * 140;

// The figure: rows x cols panels of P x P weights (P = positions read), NaN above the
// diagonal (the renderer leaves those cells white; they are hatched afterwards).
function figure(lm) {
  const s = lm.snap, v = lm.view, P = s.positions, ld = s.ld;
  const layers = v.all ? [...Array(s.layers).keys()] : [v.layer];
  const heads = v.all ? [...Array(s.heads).keys()] : [v.head];
  const p = gatherPanels(layers, heads, P, P, ld, (l, h) => s.attention.subarray((l * s.heads + h) * ld * ld),
    (w, q, k) => (k > q ? NaN : w));
  return { ...p, q: P, k: P, labels: s.tokens.slice(0, P), layers, heads };
}

// Figure size in CSS pixels: cells of a fixed size while they fit (the map grows with the
// text), the whole width of the card at most.
function size(f) {
  const W = room();
  if (f.cols === 1) {
    const want = 150 + f.q * 26;
    const w = Math.min(W, Math.max(300, want));
    return { w, h: Math.max(270, w - 30) };
  }
  const panel = Math.max(110, Math.min((W - 150) / f.cols - 30, f.q * 9));
  const w = Math.min(W, 150 + f.cols * (panel + 30));
  return { w, h: 110 + f.rows * (panel + 34) };
}

let hatchCache = null;
function hatch(ctx, s) {
  if (hatchCache?.s === s) return hatchCache.pattern;
  const n = 6 * s;
  const c = document.createElement('canvas');
  c.width = c.height = n;
  const g = c.getContext('2d');
  g.fillStyle = '#ececec';
  g.fillRect(0, 0, n, n);
  g.strokeStyle = '#a9a9a9';
  g.lineWidth = s;
  g.beginPath();
  // one diagonal per tile, continuous across tiles
  g.moveTo(-1, n + 1);
  g.lineTo(n + 1, -1);
  g.moveTo(-1, 1);
  g.lineTo(1, -1);
  g.moveTo(n - 1, n + 1);
  g.lineTo(n + 1, n - 1);
  g.stroke();
  hatchCache = { s, pattern: ctx.createPattern(c, 'repeat') };
  return hatchCache.pattern;
}

export function drawMap(lm, streaming, message) {
  const s = lm.snap;
  if (!s || !s.attention || s.positions < 1) return;
  const v = lm.view, f = figure(lm);
  // While words stream in, draw at one pixel per CSS pixel (fast); the last figure at the
  // screen's density.
  const sc = streaming ? 1 : lm.scale();
  const { w, h } = size(f);
  const titles = f.heads.map((hh) => (v.all ? `Head ${hh + 1}` : `Layer ${f.layers[0] + 1} · Head ${hh + 1}`));
  let img;
  try {
    img = lm.al.renderHeatmap(f.mats, {
      rows: f.rows, cols: f.cols, queries: f.q, keys: f.k, cmap: 'Reds', vmin: 0,
      xlabel: v.all ? 'Keys' : 'Keys: the words read so far', ylabel: 'Queries', titles,
      xticks: f.labels, yticks: f.labels, width: w / 100, height: h / 100, dpi: 100 * sc,
    });
  } catch (e) {
    message(`Cannot draw the attention map: ${e.message}`);
    return;
  }
  const c = $('lm-heatmap');
  const ctx = putImage(c, img, sc);
  // The masked cells (key after query): one hatched strip per row of every panel.
  ctx.fillStyle = hatch(ctx, sc);
  const L = img.layout;
  for (let r = 0; r < f.rows; ++r) {
    for (let cc = 0; cc < f.cols; ++cc) {
      const P = L.panels[r * f.cols + cc];
      for (let q = 0; q + 1 < f.q; ++q) {
        const a = L.cell(r, cc, q, q + 1);
        ctx.fillRect(a.x, a.y, P.x + P.w - a.x, a.h);
      }
    }
  }
  lm.fig = { ...f, layout: L, s: sc, masked: true, positions: f.q };
  c.dataset.layer = String(v.layer);
  c.dataset.head = String(v.head);
  c.dataset.all = String(v.all);
  c.dataset.positions = String(f.q);
  layerLabels($('lm-row-labels'), $('lm-heatmap-box'), v.all, f.layers, L, f.cols, sc);
  const where = v.all ? `all ${f.rows} layers × ${f.cols} heads` : `layer ${v.layer + 1}, head ${v.head + 1}`;
  $('lm-caption').textContent = `Causal self-attention, ${where}: row q is the word at position q, reading the words ` +
    `up to it (columns) to predict the next word. Each row sums to 1. ${f.q} position${f.q > 1 ? 's' : ''} read: ` +
    `<bos>, the prompt${s.numGenerated > 1 ? ' and the words fed back' : ''}${s.done ? '; the last word chosen is never read' : ''}.`;
  $('lm-tooltip').hidden = true;
  $('lm-hover').textContent = 'Hover or tap a cell to read its weight.';
  $('lm-hover').classList.add('muted');
}

export function onMapHover(lm, e) {
  const f = lm.fig;
  if (!f) return;
  const c = $('lm-heatmap');
  const hit = cellUnder(e, c, f);
  const tip = $('lm-tooltip');
  if (!hit) {
    tip.hidden = true;
    return;
  }
  const masked = hit.k > hit.q;
  const value = masked ? 'masked' : hit.w.toFixed(4);
  $('lm-hover').textContent = `layer ${hit.l + 1}, head ${hit.h + 1}: ${f.labels[hit.q]} (position ${hit.q}) → ` +
    `${f.labels[hit.k]} (position ${hit.k})  ${masked ? 'masked: a word never sees the words after it' : value}`;
  $('lm-hover').classList.remove('muted');
  showTooltip(tip, e, c, $('lm-heatmap-box'), f.labels[hit.q], f.labels[hit.k], value);
}
