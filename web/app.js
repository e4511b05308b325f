// The attnlite page: translation with every attention map, the language model (lm.js), the
// Vision Transformer for drawn digits (vit.js) and the Nadaraya-Watson demo.
// Everything runs here, in WebAssembly (attnlite.wasm through attnlite-api.mjs).
import { Attnlite } from './attnlite-api.mjs';
import * as lmSection from './lm.js';
import * as vitSection from './vit.js';
import { drawNW as drawNWWith } from './nw.js';
import { $, scale, fillSelect, putImage, gatherPanels, cellUnder, showTooltip, layerLabels, downloadCanvas } from './ui.js';

// The shipped models, fetched relative to this page (web/models is a link to ../models).
// The first one present is loaded; those whose file is missing are listed, disabled.
const MODELS = [
  { name: 'transformer-fra', label: 'Transformer, whole corpus (int8)' },
  { name: 'transformer-d2l', label: 'Transformer (d2l 10.7)' },
  { name: 'bahdanau-d2l', label: 'Bahdanau GRU (d2l 10.4)' },
];
const EXAMPLES = ['go .', 'i lost .', "he's calm .", "i'm home ."];
const KIND_NAMES = { enc: 'Encoder self-attention', dec: 'Decoder self-attention', cross: 'Encoder–decoder (cross) attention' };

const state = {
  al: null,
  model: null,       // attnlite Model
  modelName: '',
  result: null,      // the last translation
  view: { kind: 'cross', layer: 0, head: 0, all: false, pad: false, cmap: 'Reds' },
  fig: null,         // what the heatmap canvas shows: {layout, mats, rows, cols, qLabels, kLabels, ...}
  translations: 0,
};

// ---- status and errors ----
function setState(s) {
  document.body.dataset.state = s;
}

function showError(message, kind = 'error') {
  const box = $('error');
  box.textContent = message;
  box.className = kind === 'warn' ? 'error warn' : 'error';
  box.hidden = false;
}

function clearError() {
  $('error').hidden = true;
  $('error').textContent = '';
}

// ---- models ----
async function probeModels() {
  const sel = $('model');
  sel.textContent = '';
  await Promise.all(MODELS.map(async (m) => {
    const opt = document.createElement('option');
    opt.value = m.name;
    opt.textContent = m.label;
    try {
      const r = await fetch(`models/${m.name}.safetensors`, { method: 'HEAD' });
      if (!r.ok) throw new Error(String(r.status));
    } catch {
      opt.disabled = true;
      opt.textContent += ' (not available)';
    }
    m.option = opt;
  }));
  for (const m of MODELS) sel.append(m.option);
  return MODELS.filter((m) => !m.option.disabled).map((m) => m.name);
}

function useModel(model, name) {
  state.model?.free();
  state.model = model;
  state.modelName = name;
  const kind = model.kind === 'transformer' ? `Transformer · ${model.layers} layers · ${model.heads} heads` : 'Bahdanau GRU · additive attention';
  $('model-info').textContent = `${name}: ${kind} · ${model.srcVocabSize} English / ${model.tgtVocabSize} French tokens · ` +
    `${(model.weightBytes / 1024).toFixed(0)} KB of weights · up to ${model.numSteps} steps`;
  $('translate').disabled = false;
  $('d2l-compat').disabled = model.kind !== 'transformer';  // positions exist only there
  for (const o of $('beam').options) o.disabled = Number(o.value) > model.maxBeam;
  if (Number($('beam').value) > model.maxBeam) $('beam').value = String(model.maxBeam);
  state.result = null;
  state.view.layer = 0;
  state.view.head = 0;
  state.view.kind = model.kind === 'transformer' ? state.view.kind : 'cross';
}

// Returns the error message, or '' once the model is in use.
async function loadShipped(name) {
  setState('busy');
  try {
    const r = await fetch(`models/${name}.safetensors`);
    if (!r.ok) throw new Error(`models/${name}.safetensors: HTTP ${r.status}`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    useModel(state.al.loadModel(bytes), name);
    $('model').value = name;
    clearError();
    translate();
    return '';
  } catch (e) {
    showError(`Could not load the model ${name}: ${e.message}`);
    setState('error');
    return e.message;
  }
}

async function loadFile(file) {
  setState('busy');
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const model = state.al.loadModel(bytes);  // throws AttnliteError on a bad file
    if (model.kind === 'lm') {  // a language model: the section below generates with it
      try {
        lmSection.useModel(model, file.name);
      } catch (e) {
        model.free();
        throw e;
      }
      showError(`${file.name} is a language model: it is now the model of the Language model section below.`, 'warn');
      setState(state.model ? 'ready' : 'error');
      document.getElementById('lm-card').scrollIntoView({ behavior: 'smooth' });
      return;
    }
    if (model.kind === 'vit') {  // a Vision Transformer: the digits section classifies with it
      try {
        vitSection.useModel(model, file.name);
      } catch (e) {
        model.free();
        throw e;
      }
      showError(`${file.name} is a Vision Transformer: it is now the model of the Vision Transformer section below.`, 'warn');
      setState(state.model ? 'ready' : 'error');
      document.getElementById('vit-card').scrollIntoView({ behavior: 'smooth' });
      return;
    }
    useModel(model, file.name);
    const opt = document.createElement('option');
    opt.value = `file:${file.name}`;
    opt.textContent = `${file.name} (your file)`;
    $('model').append(opt);
    $('model').value = opt.value;
    clearError();
    translate();
  } catch (e) {
    showError(`Could not load ${file.name}: ${e.message}`);
    setState('error');
  }
}

// ---- translation ----
function translate() {
  if (!state.model) return;
  const sentence = $('sentence').value;
  try {
    if (!sentence.trim()) throw new Error('Type an English sentence first (the input is empty).');
    const a = $('alpha').value.trim();
    const r = state.model.translate(sentence, {
      d2lCompat: $('d2l-compat').checked,
      beam: Number($('beam').value),
      alpha: a === '' ? NaN : Number(a),  // the library says what is wrong with a bad value
    });
    state.result = r;
    state.translations += 1;
    document.body.dataset.translations = String(state.translations);
    clearError();
    const notes = [];
    if (r.unknown.length)
      notes.push(`Unknown word${r.unknown.length > 1 ? 's' : ''} (the model reads <unk>): ${r.unknown.join(', ')}`);
    if (r.truncated) notes.push(`The sentence has more than ${r.S - 1} tokens; the model sees only the first ${r.S - 1}, as in the book.`);
    if (notes.length) showError(notes.join(' · '), 'warn');
    showResult(r);
    setState('ready');
  } catch (e) {
    showError(e.message);
    setState('error');
  }
}

function showResult(r) {
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
function syncControls() {
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

function drawAttention() {
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

function hideTooltip() {
  $('tooltip').hidden = true;
}

function onHover(e) {
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

function downloadPng() {
  const v = state.view;
  const name = `attnlite-${state.modelName.replace(/\.safetensors$/, '')}-${v.kind}` +
    (v.all ? '-all' : `-L${v.layer + 1}-H${v.head + 1}`) + '.png';
  downloadCanvas($('heatmap'), name, showError);
}

const drawNW = () => drawNWWith(state.al, state.view.cmap, showError);

// ---- wiring ----
function wire() {
  lmSection.wire();
  vitSection.wire();
  $('translate-form').addEventListener('submit', (e) => {
    e.preventDefault();
    translate();
  });
  $('d2l-compat').addEventListener('change', translate);
  $('beam').addEventListener('change', translate);
  $('alpha').addEventListener('change', translate);
  $('model').addEventListener('change', (e) => {
    const v = e.target.value;
    if (!v.startsWith('file:')) loadShipped(v);
  });
  $('model-file').addEventListener('change', (e) => {
    const file = e.target.files[0];
    if (file) loadFile(file);
    e.target.value = '';
  });
  for (const s of EXAMPLES) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip';
    b.textContent = s;
    b.addEventListener('click', () => {
      $('sentence').value = s;
      translate();
    });
    $('examples').append(b);
  }
  $('attn-kind').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b || b.disabled) return;
    state.view.kind = b.dataset.kind;
    syncControls();
    drawAttention();
  });
  const redraw = () => {
    const v = state.view;
    v.layer = Number($('layer').value);
    v.head = Number($('head').value);
    v.all = $('all-heads').checked;
    v.pad = $('show-pad').checked;
    v.cmap = $('cmap').value;
    syncControls();
    drawAttention();
  };
  for (const id of ['layer', 'head', 'all-heads', 'show-pad']) $(id).addEventListener('change', redraw);
  $('cmap').addEventListener('change', () => {
    redraw();
    drawNW();
  });
  $('heatmap').addEventListener('mousemove', onHover);
  $('heatmap').addEventListener('pointerdown', onHover);  // touch screens: tap a cell
  $('heatmap').addEventListener('mouseleave', hideTooltip);
  $('download').addEventListener('click', downloadPng);
  $('nw-width').addEventListener('input', drawNW);
}

async function main() {
  wire();
  try {
    state.al = await Attnlite.create();
  } catch (e) {
    showError(`Could not start the WebAssembly module: ${e.message ?? e}`);
    setState('error');
    return;
  }
  drawNW();
  lmSection.init(state.al, { scale });
  vitSection.init(state.al, { scale });
  const available = await probeModels();
  if (!available.length) {
    showError('No shipped model could be fetched from models/. Load a .safetensors file with “Load your own model”.');
    $('model-info').textContent = 'No model loaded.';
    setState('error');
    return;
  }
  // The first model that loads: one this build cannot read is marked and the next tried.
  const failed = [];
  for (const name of available) {
    const err = await loadShipped(name);
    if (!err) break;
    failed.push(`${name} (${err})`);
    const opt = MODELS.find((m) => m.name === name).option;
    opt.disabled = true;
    opt.textContent += ' (could not load)';
  }
  if (failed.length && state.model) showError(`Could not load ${failed.join(', ')}; showing ${state.modelName} instead.`, 'warn');
  else if (!state.model) $('model-info').textContent = 'No model loaded.';
}

// For the page's tests and for poking at results from the console.
window.attnlitePage = { figure: () => state.fig, result: () => state.result, view: () => ({ ...state.view }), lm: lmSection.debug, vit: vitSection.debug };

main();
