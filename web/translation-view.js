// The translation section's results: the translation with each token's probability, the
// beam's hypotheses, and the attention maps (encoder self-attention, decoder self-attention,
// cross-attention; one head or all), read by pointer or finger, saved as PNG.
import { $, scale, fillSelect, putImage, gatherPanels, cellUnder, showTooltip, layerLabels, downloadCanvas } from './ui.js';

const KIND_NAMES = { enc: 'Encoder self-attention', dec: 'Decoder self-attention', cross: 'Encoder–decoder (cross) attention' };

let state = null;      // the page's state (app.js): model, result, view, fig
let showError = null;  // the page's error box

export function attach(pageState, onError) {
  state = pageState;
  showError = onError;
}

export function showResult(r) {
  $('result').hidden = false;
  $('output-text').textContent = r.text || '(nothing before <eos>)';
  const box = $('tokens');
  box.textContent = '';
  r.tokens.forEach((t, i) => {
    const chip = document.createElement('span');
    chip.className = 'token';
    const p = r.scores[i];
    chip.title = `step ${i + 1}: p = ${p.toFixed(4)}`;
    chip.innerHTML = '<b></b><small></small><i></i>';
    chip.querySelector('b').textContent = t;
    chip.querySelector('small').textContent = p.toFixed(3);
    chip.querySelector('i').style.width = `${(p * 100).toFixed(1)}%`;
    box.append(chip);
  });
  $('result-info').textContent = `${r.steps} decoding step${r.steps > 1 ? 's' : ''}` +
    (r.eos ? ', stopped at <eos>' : ', stopped at the step limit') +
    ` · positions: ${r.positions === 'd2l' ? 'the book’s (0 at every step)' : 'step t at step t'}` +
    (r.beam > 1 ? ` · beam ${r.beam}, α ${r.alpha}` : ' · greedy') +
    ` · source: ${r.srcTokens.slice(0, r.srcValid).join(' ')}`;
  showNBest(r);
  $('attention-card').hidden = false;
  syncControls();
  drawAttention();
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
    li.querySelector('.hyp').textContent = h.text || '(nothing before <eos>)';
    li.querySelector('.score').textContent = `${h.score.toFixed(4)}${h.eos ? '' : ' · no <eos>'}`;
    list.append(li);
  });
}

// ---- attention maps ----
export function syncControls() {
  const m = state.model, v = state.view;
  const tr = m.kind === 'transformer';
  for (const b of $('attn-kind').querySelectorAll('button')) {
    b.disabled = !tr && b.dataset.kind !== 'cross';
    b.setAttribute('aria-selected', String(b.dataset.kind === v.kind));
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
  let q, k, ld, full, qLabels, kLabels, xlabel, ylabel;
  if (v.kind === 'enc') {
    [q, k, ld, full] = [nSrc, nSrc, S, r.attention.encoderSelf];
    [qLabels, kLabels, xlabel, ylabel] = [src, src, 'Keys: source tokens', 'Queries: source tokens'];
  } else if (v.kind === 'dec') {
    [q, k, ld, full] = [T, T, T, r.attention.decoderSelf];
    [qLabels, kLabels, xlabel, ylabel] = [outputs, inputs, 'Keys: decoder inputs', 'Queries: predicted tokens'];
  } else {
    [q, k, ld, full] = [T, nSrc, S, r.attention.cross];
    [qLabels, kLabels, xlabel, ylabel] = [outputs, src, 'Keys: source tokens', 'Queries: predicted tokens'];
  }
  const layers = v.all ? [...full.keys()] : [v.layer];
  const heads = v.all ? [...full[0].keys()] : [v.head];
  const p = gatherPanels(layers, heads, q, k, ld, (l, h) => full[l][h]);
  return { ...p, q, k, qLabels, kLabels, xlabel, ylabel, layers, heads };
}

export function drawAttention() {
  if (!state.result) return;
  const v = state.view, f = currentFigure(), s = scale();
  const tr = state.model.kind === 'transformer';
  // Inches at 100 dpi: about 34 px a cell, room for the labels and the colorbar.
  const cell = f.rows * f.cols > 1 ? 0.24 : 0.46;
  let width = Math.max(3.2, f.cols * (f.k * cell + 0.45) + 1.9);
  let height = Math.max(2.8, f.rows * (f.q * cell + 0.35) + 1.3);
  // No wider than the card (phones, big grids): the same figure, scaled down, but not below
  // about 1.6 inches a panel; a grid wider than that scrolls sideways inside the card.
  const room = Math.max(($('heatmap-scroll').clientWidth || 1e9) / 100, f.cols * 1.6 + 1.9);
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
    ? `${KIND_NAMES[v.kind]}, ${v.all ? `all ${f.rows} layers × ${f.cols} heads` : `layer ${v.layer + 1}, head ${v.head + 1}`}. Each row sums to 1.`
    : 'Bahdanau (additive) attention of each decoding step over the source: one layer, one head. Each row sums to 1.';
  hideTooltip();
  $('hover').textContent = 'Hover a cell to read its weight.';
  $('hover').classList.add('muted');
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
  const where = state.model.kind === 'transformer' ? `layer ${hit.l + 1}, head ${hit.h + 1}: ` : '';
  $('hover').textContent = `${where}${f.qLabels[hit.q]} → ${f.kLabels[hit.k]}  ${hit.w.toFixed(4)}`;
  $('hover').classList.remove('muted');
  showTooltip($('tooltip'), e, c, $('heatmap-box'), f.qLabels[hit.q], f.kLabels[hit.k], hit.w.toFixed(4));
}

export function downloadPng() {
  const v = state.view;
  const name = `attnlite-${state.modelName.replace(/\.safetensors$/, '')}-${v.kind}` +
    (v.all ? '-all' : `-L${v.layer + 1}-H${v.head + 1}`) + '.png';
  downloadCanvas($('heatmap'), name, showError);
}
