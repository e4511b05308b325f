// The translation section's results: the translation with each token's probability, the
// beam's hypotheses, and the attention maps (encoder self-attention, decoder self-attention,
// cross-attention; one head or all), read by pointer or finger, saved as PNG.
import { $, scale, fillSelect, putImage, gatherPanels, cellUnder, showTooltip, layerLabels, downloadCanvas } from './ui.js';

const KIND_NAMES = { enc: 'Encoder self-attention', dec: 'Decoder self-attention', cross: 'Encoder–decoder (cross) attention' };

let state = null;      // the page's state (app.js): model, result, view, fig
let showError = null;  // the page's error box

// Which map the view shows: "Encoder self-attention, layer 1, head 2" (or all of a grid).
function mapName(v, f) {
  return state.model.layered
    ? `${KIND_NAMES[v.kind]}, ${v.all ? `all ${f.rows} layers × ${f.cols} heads` : `layer ${v.layer + 1}, head ${v.head + 1}`}`
    : 'Bahdanau (additive) attention';
}

// The reading of one cell, for the line under the map: "layer 1, head 2: suis → home  0.7275".
function cellReading(f, l, h, q, k, w) {
  const where = state.model.layered ? `layer ${l + 1}, head ${h + 1}: ` : '';
  return `${where}${f.qLabels[q]} → ${f.kLabels[k]}  ${w.toFixed(4)}`;
}

// French text into an element, each closing punctuation mark ("?", "!", ":", ";", "." …, as
// the models write them after a space) kept on the line of the word before it: the pair goes
// in a span that does not wrap (words of up to 16 characters: a longer one may need to wrap
// inside itself on a phone). The text itself (textContent) is unchanged.
const CLOSING = /^[?!:;.,…»)]+$/;
export function setFrench(el, text) {
  el.textContent = '';
  const words = text.split(' ');
  let plain = '';
  for (let i = 0; i < words.length; ++i) {
    const sep = i ? ' ' : '';
    if (i + 1 < words.length && words[i] && words[i].length <= 16 && CLOSING.test(words[i + 1])) {
      el.append(plain + sep);
      plain = '';
      const glued = document.createElement('span');
      glued.className = 'nowrap';
      glued.textContent = `${words[i]} ${words[i + 1]}`;
      el.append(glued);
      ++i;
    } else {
      plain += sep + words[i];
    }
  }
  if (plain) el.append(plain);
}

export function attach(pageState, onError) {
  state = pageState;
  showError = onError;
}

// r: the translation whose tokens, hypotheses and maps are shown: the text's, or, for a text
// of several sentences (state.results), the chosen sentence's, the French of all above.
export function showResult(r) {
  $('result').hidden = false;
  const several = state.results.length > 1;
  setFrench($('output-text'), (several ? state.text : r.text) || '(nothing before <eos>)');
  showSentences(r);
  const box = $('tokens');
  box.textContent = '';
  r.tokens.forEach((t, i) => {
    const chip = document.createElement('span');
    chip.className = 'token';
    const p = r.scores[i];
    chip.title = `step ${i + 1}: p = ${p.toFixed(4)}`;
    chip.innerHTML = '<b lang="fr"></b><small></small><i></i>';
    chip.querySelector('b').textContent = t;
    chip.querySelector('small').textContent = p.toFixed(3);
    chip.querySelector('i').style.width = `${(p * 100).toFixed(1)}%`;
    box.append(chip);
  });
  $('result-info').textContent = `${r.steps} decoding step${r.steps > 1 ? 's' : ''}` +
    (r.eos ? ', stopped at <eos>' : ', stopped at the step limit') +
    (state.model.selfAttention ? ` · positions: ${r.positions === 'd2l' ? 'the book’s (0 at every step)' : 'step t at step t'}` : '') +
    (r.beam > 1 ? ` · beam ${r.beam}, α ${r.alpha}` : ' · greedy') +
    ` · source${r.subword ? ' pieces' : ''}: ${r.srcTokens.slice(0, r.srcValid).join(' ')}`;
  showNBest(r);
  $('attention-card').hidden = false;
  syncControls();
  drawAttention();
}

// A text of several sentences: a button for each, the chosen one pressed; choosing another
// shows its tokens, hypotheses and maps.
function showSentences(r) {
  const box = $('sentences');
  box.querySelectorAll('button').forEach((b) => b.remove());
  box.hidden = state.results.length < 2;
  if (box.hidden) return;
  state.results.forEach((x, i) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip';
    b.textContent = x.sentence;
    b.title = `sentence ${i + 1} of ${state.results.length}: its tokens and attention maps`;
    b.setAttribute('aria-pressed', String(x === r));
    b.addEventListener('click', () => {
      if (state.result === x) return;
      state.result = x;
      state.cursor = null;
      showResult(x);
    });
    box.append(b);
  });
}

// The beam's hypotheses, best first, with their scores (beam > 1 only). The attention
// maps below show the first, the translation above.
function showNBest(r) {
  const box = $('nbest-box'), list = $('nbest');
  list.textContent = '';
  box.hidden = r.beam <= 1;
  if (box.hidden) return;
  $('nbest-caption').textContent = r.alpha
    ? `score = log p / length^${r.alpha}`
    : 'score = log p (summed log-probabilities)';
  r.nbest.forEach((h, i) => {
    const li = document.createElement('li');
    li.className = i === 0 ? 'best' : '';
    li.dataset.score = String(h.score);
    li.title = `log p ${h.logp.toFixed(4)} · length ${h.length}${h.eos ? ' with <eos>' : ', stopped at the step limit'}`;
    li.innerHTML = '<span class="hyp"></span><span class="score"></span>';
    setFrench(li.querySelector('.hyp'), h.text || '(nothing before <eos>)');
    li.querySelector('.score').textContent = `${h.score.toFixed(4)}${h.eos ? '' : ' · no <eos>'}`;
    list.append(li);
  });
}

// ---- attention maps ----
export function syncControls() {
  const m = state.model, v = state.view;
  const tr = m.layered;
  for (const b of $('attn-kind').querySelectorAll('button')) {
    b.disabled = !m.selfAttention && b.dataset.kind !== 'cross';
    b.setAttribute('aria-selected', String(b.dataset.kind === v.kind));
    b.tabIndex = b.dataset.kind === v.kind ? 0 : -1;  // one tab stop; arrows move between tabs
  }
  const layers = tr ? m.layers : 1, heads = m.heads;
  fillSelect($('layer'), layers, 'Layer', v.layer);
  fillSelect($('head'), heads, 'Head', v.head);
  $('all-heads').disabled = !tr;
  if (!tr) v.all = false;
  $('all-heads').checked = v.all;
  $('layer').disabled = v.all || layers === 1;
  $('head').disabled = v.all || heads === 1;
}

// The matrices and labels of the current view: rows x cols panels of q x k weights.
function currentFigure() {
  const r = state.result, v = state.view;
  const S = r.S, T = r.steps;
  const nSrc = v.pad ? S : r.srcValid;
  const src = r.srcTokens.slice(0, nSrc);
  const outputs = [...r.tokens, ...(r.eos ? ['<eos>'] : [])].slice(0, T);
  const inputs = ['<bos>', ...r.tokens].slice(0, T);
  const unit = r.subword ? 'pieces' : 'tokens';  // a sub-word model's tokens are word pieces
  let q, k, ld, full, qLabels, kLabels, xlabel, ylabel;
  if (v.kind === 'enc') {
    [q, k, ld, full] = [nSrc, nSrc, S, r.attention.encoderSelf];
    [qLabels, kLabels, xlabel, ylabel] = [src, src, `Keys: source ${unit}`, `Queries: source ${unit}`];
  } else if (v.kind === 'dec') {
    [q, k, ld, full] = [T, T, T, r.attention.decoderSelf];
    [qLabels, kLabels, xlabel, ylabel] = [outputs, inputs, 'Keys: decoder inputs', `Queries: predicted ${unit}`];
  } else {
    [q, k, ld, full] = [T, nSrc, S, r.attention.cross];
    [qLabels, kLabels, xlabel, ylabel] = [outputs, src, `Keys: source ${unit}`, `Queries: predicted ${unit}`];
  }
  const layers = v.all ? [...full.keys()] : [v.layer];
  const heads = v.all ? [...full[0].keys()] : [v.head];
  const p = gatherPanels(layers, heads, q, k, ld, (l, h) => full[l][h]);
  return { ...p, q, k, qLabels, kLabels, xlabel, ylabel, layers, heads };
}

export function drawAttention() {
  if (!state.result) return;
  const v = state.view, f = currentFigure(), s = scale();
  const tr = state.model.layered;
  // Inches at 100 dpi: about 34 px a cell, room for the labels and the colorbar.
  const cell = f.rows * f.cols > 1 ? 0.24 : 0.46;
  let width = Math.max(3.2, f.cols * (f.k * cell + 0.45) + 1.9);
  let height = Math.max(2.8, f.rows * (f.q * cell + 0.35) + 1.3);
  // No wider than the card (phones, big grids): the same figure, scaled down, but not below
  // about 1.6 inches a panel, nor below the room every key's label needs (the renderer skips
  // labels on cells narrower than a line of its 10 pt text, about 0.16 inch; they are written
  // upwards) beside the longest query label (about 0.08 inch a character) and the colour bar:
  // sub-word sentences have more tokens than words. A figure wider than that scrolls sideways
  // inside the card rather than leave keys unlabelled.
  const longest = Math.max(0, ...f.qLabels.map((t) => [...t].length));
  const labelled = f.cols * (f.k * 0.165 + 0.1) + 0.08 * longest + 1.15;
  const room = Math.max(($('heatmap-scroll').clientWidth || 1e9) / 100, f.cols * 1.6 + 1.9, labelled);
  if (width > room) {
    height *= Math.max(0.6, room / width);
    width = room;
  }
  const titles = tr ? f.heads.map((h) => (v.all ? `Head ${h + 1}` : `Layer ${f.layers[0] + 1} · Head ${h + 1}`)) : [];
  let img;
  try {
    img = state.al.renderHeatmap(f.mats, {
      rows: f.rows, cols: f.cols, queries: f.q, keys: f.k, cmap: v.cmap,
      xlabel: f.xlabel, ylabel: f.ylabel, titles, xticks: f.kLabels, yticks: f.qLabels,
      width, height, dpi: 100 * s,
    });
  } catch (e) {
    showError(`Cannot draw the heatmap: ${e.message}`);
    return;
  }
  const c = $('heatmap');
  putImage(c, img, s);
  state.fig = { ...f, layout: img.layout, s };
  c.dataset.kind = v.kind;
  c.dataset.layer = String(v.layer);
  c.dataset.head = String(v.head);
  c.dataset.all = String(v.all);
  layerLabels($('row-labels'), $('heatmap-box'), v.all, f.layers, img.layout, f.cols, s);
  $('attn-caption').textContent = tr
    ? `${mapName(v, f)}. Each row sums to 1.`
    : 'Bahdanau (additive) attention of each decoding step over the source: one layer, one head. Each row sums to 1.';
  hideTooltip();
  $('hover').textContent = 'Hover or tap a cell, or focus the map and use the arrow keys, to read a weight.';
  $('hover').classList.add('muted');
  const cur = state.cursor;
  if (!cur || cur.panel >= f.rows * f.cols || cur.q >= f.q || cur.k >= f.k) state.cursor = { panel: 0, q: 0, k: 0 };
  if (document.activeElement === c) showCursor();
  else $('cell-focus').hidden = true;
  if (state.table) drawTable();
}

export function hideTooltip() {
  $('tooltip').hidden = true;
}

export function onHover(e) {
  const f = state.fig;
  if (!f) return;
  const c = $('heatmap');
  const hit = cellUnder(e, c, f);
  if (!hit) {
    hideTooltip();
    return;
  }
  $('hover').textContent = cellReading(f, hit.l, hit.h, hit.q, hit.k, hit.w);
  $('hover').classList.remove('muted');
  showTooltip($('tooltip'), e, c, $('heatmap-box'), f.qLabels[hit.q], f.kLabels[hit.k], hit.w.toFixed(4));
}

// The figure to download: the current map as `attnlite heatmap translate` draws it (the same
// layout code in the renderer module, at the CLI's 100 dpi), titled with the model, the
// attention kind, the sentence and its translation, each row of an all-heads grid named by
// its layer.
export function figureForDownload() {
  const f = currentFigure(), r = state.result, v = state.view;
  return state.al.renderTranslationMap(f.mats, {
    kind: v.kind, layers: f.layers, heads: f.heads, queries: f.q, keys: f.k,
    transformer: state.model.layered, model: modelStem(),
    sentence: r.sentence ?? r.srcWords.join(' '), translation: r.text,
    xticks: f.kLabels, yticks: f.qLabels, cmap: v.cmap,
  });
}

// The model's name as the CLI shows it: the file's name without .safetensors.
function modelStem() {
  return state.modelName.replace(/^.*\//, '').replace(/\.safetensors$/, '');
}

function downloadName(ext) {
  const v = state.view;
  return `attnlite-${modelStem()}-${v.kind}` + (v.all ? '-all' : `-L${v.layer + 1}-H${v.head + 1}`) + `.${ext}`;
}

export function downloadPng() {
  let img;
  try {
    img = figureForDownload();
  } catch (e) {
    showError(`Cannot draw the figure: ${e.message}`);
    return;
  }
  const c = document.createElement('canvas');
  c.width = img.width;
  c.height = img.height;
  c.getContext('2d').putImageData(new ImageData(img.data, img.width, img.height), 0, 0);
  downloadCanvas(c, downloadName('png'), showError);
}

// ---- keyboard and table ----
// The cell a key press reads: state.cursor = { panel, q, k }, shown by a frame on the map and
// read out below it (and announced: the readout is a live region).
export function showCursor() {
  const f = state.fig;
  if (!f) return;
  const { panel, q, k } = state.cursor;
  const row = Math.floor(panel / f.cols), col = panel % f.cols;
  const cell = f.layout.cell(row, col, q, k), c = $('heatmap'), box = $('cell-focus');
  box.style.left = `${c.offsetLeft + cell.x / f.s - 1}px`;
  box.style.top = `${c.offsetTop + cell.y / f.s - 1}px`;
  box.style.width = `${cell.w / f.s + 2}px`;
  box.style.height = `${cell.h / f.s + 2}px`;
  box.hidden = false;
  const { l, h } = f.panels[panel], w = f.mats[(panel * f.q + q) * f.k + k];
  $('hover').textContent = `${cellReading(f, l, h, q, k, w)} (query ${q + 1} of ${f.q}, key ${k + 1} of ${f.k})`;
  $('hover').classList.remove('muted');
  if (state.table) drawTable();
}

export function hideCursor() {
  $('cell-focus').hidden = true;
}

// Arrow keys move one cell (across panels at a panel's edge), Home/End to the row's first and
// last key, PageUp/PageDown to the first and last query.
export function onKey(e) {
  const f = state.fig;
  if (!f) return;
  const cur = { ...state.cursor };
  let row = Math.floor(cur.panel / f.cols), col = cur.panel % f.cols;
  switch (e.key) {
    case 'ArrowRight':
      if (cur.k + 1 < f.k) cur.k += 1;
      else if (col + 1 < f.cols) [col, cur.k] = [col + 1, 0];
      break;
    case 'ArrowLeft':
      if (cur.k > 0) cur.k -= 1;
      else if (col > 0) [col, cur.k] = [col - 1, f.k - 1];
      break;
    case 'ArrowDown':
      if (cur.q + 1 < f.q) cur.q += 1;
      else if (row + 1 < f.rows) [row, cur.q] = [row + 1, 0];
      break;
    case 'ArrowUp':
      if (cur.q > 0) cur.q -= 1;
      else if (row > 0) [row, cur.q] = [row - 1, f.q - 1];
      break;
    case 'Home': cur.k = 0; break;
    case 'End': cur.k = f.k - 1; break;
    case 'PageUp': cur.q = 0; break;
    case 'PageDown': cur.q = f.q - 1; break;
    default: return;
  }
  e.preventDefault();
  cur.panel = row * f.cols + col;
  state.cursor = cur;
  showCursor();
}

// Arrow keys, Home and End between the attention tabs (the enabled ones), selecting as they go.
export function onTabKey(e) {
  const tabs = [...$('attn-kind').querySelectorAll('button:not([disabled])')];
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const t = tabs[(to + tabs.length) % tabs.length];
  t.focus();
  t.click();
}

// The weights of the cursor's panel as a table: a row per query, a column per key, the
// largest weight of each row in bold.
export function toggleTable() {
  state.table = !state.table;
  $('table-view').setAttribute('aria-pressed', String(state.table));
  $('weights-table-box').hidden = !state.table;
  if (state.table) drawTable();
}

function drawTable() {
  const f = state.fig;
  if (!f) return;
  const p = state.cursor?.panel ?? 0, { l, h } = f.panels[p];
  const t = document.createElement('table');
  const cap = t.createCaption();
  cap.textContent = (state.model.layered ? `Layer ${l + 1}, head ${h + 1}: ` : '') +
    `${f.ylabel.replace(/^Queries: /, '')} (rows) attending to ${f.xlabel.replace(/^Keys: /, '')} (columns)`;
  const head = t.createTHead().insertRow();
  head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: '' }));
  for (const k of f.kLabels) head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: k }));
  const body = t.createTBody();
  for (let q = 0; q < f.q; ++q) {
    const tr = body.insertRow();
    tr.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: f.qLabels[q] }));
    const row = f.mats.subarray((p * f.q + q) * f.k, (p * f.q + q + 1) * f.k);
    const best = row.indexOf(Math.max(...row));
    row.forEach((w, k) => {
      const td = tr.insertCell();
      td.textContent = w.toFixed(3);
      if (k === best) td.className = 'max';
    });
  }
  $('weights-table-box').replaceChildren(t);
}
