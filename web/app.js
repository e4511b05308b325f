// The attnlite page: translation with every attention map, the language model (lm.js), the
// Vision Transformer for drawn digits (vit.js) and the Nadaraya-Watson demo.
// Everything runs here, in WebAssembly (attnlite.wasm through attnlite-api.mjs, and the figure
// renderer attnlite-figures.wasm), compiled once: translations run in a worker
// (translator-client.js), which loads the runtime only; the rest on this thread.
import { Attnlite } from './attnlite-api.mjs';
import { TranslatorClient, CancelledError } from './translator-client.js';
import * as lmSection from './lm.js';
import * as vitSection from './vit.js';
import { drawNW as drawNWWith } from './nw.js';
import { $, scale, readAll, mb } from './ui.js';
import {
  showResult, syncControls, drawAttention, hideTooltip, onHover, downloadPng, attach,
  showCursor, hideCursor, onKey, onTabKey, toggleTable,
} from './translation-view.js';

// The shipped translators, fetched relative to this page (web/models is a link to ../models).
// Those whose file is missing are listed, disabled. tools/web_version.mjs reads MODELS (one
// entry a line) and DEFAULT_MODEL for the service worker, which caches them on the first
// visit, but those marked `later` (cached when first used: the word model the sub-word one
// replaced, 4.9 MB a phone need not fetch up front).
const MODELS = [
  { name: 'transformer-fra-bpe', label: 'Transformer, whole corpus, sub-words (int8)' },
  { name: 'transformer-fra', label: 'Transformer, whole corpus, words (int8)', later: true },
  { name: 'transformer-d2l', label: 'Transformer (d2l 10.7)' },
  { name: 'bahdanau-d2l', label: 'Bahdanau GRU (d2l 10.4)' },
];
// The translator the page opens with: first in the list and loaded when its file is there;
// otherwise the first of MODELS that is.
const DEFAULT_MODEL = 'transformer-fra-bpe';
const SHOWN = [...MODELS].sort((a, b) => (b.name === DEFAULT_MODEL) - (a.name === DEFAULT_MODEL));

// The book's four sentences, as its word models read them (lowercased, spaced punctuation),
// and as written, for sub-word models, which read the English cased.
// The sub-word translator reads what people type (no capital, no final stop, a phone's
// typographic apostrophe: docs/input.md), so its last chips are typed that way.
const EXAMPLES = {
  words: ['go .', 'i lost .', "he's calm .", "i'm home ."],
  subword: ['Go.', 'I lost.', "He's calm.", "I'm home.", 'where is the station', 'Don\u2019t worry', 'i love you'],
};

const state = {
  al: null,          // the modules on this thread: figures, the language model, the ViT
  client: null,      // the translation worker (TranslatorClient)
  model: null,       // the worker's model, as described by it ({kind, layers, heads ...})
  modelName: '',
  result: null,      // the translation shown: of the text's one sentence, or of the one chosen
  results: [],       // the last text's translations, a sentence each (cut as the CLI cuts it)
  text: '',          // their French, joined by spaces
  view: { kind: 'cross', layer: 0, head: 0, all: false, pad: false, cmap: 'Reds' },
  fig: null,         // what the heatmap canvas shows: {layout, mats, rows, cols, qLabels, kLabels, ...}
  translations: 0,
  cursor: null,      // the map's cell read by the keyboard: { panel, q, k }
  table: false,      // the table view of the cursor's panel is shown
  files: new Map(),  // the user's own translator files by name (the selector's "file:" entries)
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
  await Promise.all(SHOWN.map(async (m) => {
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
  for (const m of SHOWN) sel.append(m.option);
  return SHOWN.filter((m) => !m.option.disabled).map((m) => m.name);
}

// The example chips of a kind of model (their text as it reads English); the sentence box
// follows when it holds an example of the other kind.
function showExamples(subword) {
  const mine = subword ? EXAMPLES.subword : EXAMPLES.words, other = subword ? EXAMPLES.words : EXAMPLES.subword;
  const box = $('examples');
  if (box.dataset.kind === (subword ? 'subword' : 'words')) return;
  box.dataset.kind = subword ? 'subword' : 'words';
  box.querySelectorAll('.chip').forEach((b) => b.remove());
  for (const s of mine) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip';
    b.textContent = s;
    b.addEventListener('click', () => {
      $('sentence').value = s;
      translate();
    });
    box.append(b);
  }
  const i = other.indexOf($('sentence').value);
  if (i >= 0 && i < mine.length) $('sentence').value = mine[i];
}

function useModel(model, name, value) {
  state.model = model;
  state.modelValue = value;
  $('model').value = value;
  state.modelName = name;
  const kind = model.description;  // e.g. Transformer · 2 layers · 4 heads
  const vocab = model.subword
    ? `sub-words: ${model.srcVocabSize} English / ${model.tgtVocabSize} French pieces, cased`
    : `${model.srcVocabSize} English / ${model.tgtVocabSize} French tokens`;
  $('model-info').textContent = `${name}: ${kind} · ${vocab} · ` +
    `${(model.weightBytes / 1024).toFixed(0)} KB of weights · up to ${model.numSteps} ${model.subword ? 'pieces' : 'steps'}`;
  showExamples(model.subword);
  $('translate').disabled = false;
  $('d2l-compat').disabled = !model.selfAttention;  // a decoder with positions: self-attention
  for (const o of $('beam').options) o.disabled = Number(o.value) > model.maxBeam;
  if (Number($('beam').value) > model.maxBeam) $('beam').value = String(model.maxBeam);
  state.result = null;
  state.results = [];
  state.view.layer = 0;
  state.view.head = 0;
  state.view.kind = model.selfAttention ? state.view.kind : 'cross';
}

// The downloads that share the progress bar and the status line: a shipped model's and, at
// start-up, the figure renderer's (attnlite-figures.wasm, fetched while the runtime compiles).
// The bar counts the bytes of all of them; the renderer's stay counted until the first
// model is in (loadShipped), so that the bar of that first download covers both.
const downloads = new Map();  // name -> { got, total, model }

function showDownloads() {
  const bar = $('model-progress');
  let got = 0, total = 0;
  for (const d of downloads.values()) {
    got += d.got;
    total += d.total;
  }
  const model = [...downloads.entries()].find(([, d]) => d.model)?.[0];
  bar.hidden = downloads.size === 0;
  if (bar.hidden) return;
  if (total > 0) {
    bar.max = total;
    bar.value = got;
  } else {
    bar.removeAttribute('value');
  }
  const what = model ?? 'the figure renderer';
  $('model-info').textContent = total > 0 ? `Downloading ${what}: ${mb(got)} of ${mb(total)}…` : `Downloading ${what}…`;
}

// A response's bytes, counted in the bar under name.
async function readCounted(name, r, model) {
  const d = { got: 0, total: Number(r.headers.get('content-length')) || 0, model };
  downloads.set(name, d);
  showDownloads();
  const bytes = await readAll(r, (got, total) => {
    d.got = got;
    d.total = total;
    showDownloads();
  });
  d.got = d.total = bytes.length;
  return bytes;
}

// A shipped model's bytes, with a progress bar and the bytes so far in the status line.
async function download(name) {
  const path = `models/${name}.safetensors`;
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  try {
    return await readCounted(name, r, true);
  } finally {
    downloads.clear();  // this model and the renderer's bytes counted with it
    $('model-progress').hidden = true;
  }
}

// Returns the error message, or '' once the model is in use. bytes: a download already
// started (main() fetches the first model while the module compiles).
async function loadShipped(name, bytes = null) {
  setState('busy');
  try {
    bytes = await (bytes ?? download(name));
    $('model-info').textContent = `Loading ${name}…`;
    useModel(await state.client.load(bytes), name, name);
    clearError();
    await translate();  // before main() words a fallback: this clears the error box
    return '';
  } catch (e) {
    showError(`Could not load the model ${name}: ${e.message}`);
    if (state.model) showCurrentModel();
    else setState('error');
    return e.message;
  }
}

async function loadFile(file) {
  setState('busy');
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const model = state.al.loadModel(bytes);  // throws AttnliteError on a bad file
    if (model.task === 'generate') {  // a language model: the section below generates with it
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
    if (model.task === 'classify') {  // a Vision Transformer: the digits section classifies with it
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
    model.free();  // read here for its kind; the worker translates with it
    await useOwnFile(file.name, bytes);
  } catch (e) {
    showError(`Could not load ${file.name}: ${e.message}`);
    if (state.model) showCurrentModel();
    else setState('error');
  }
}

// A translator file of the user's, loaded (or loaded again) into the worker: one entry in the
// selector per file name, selected; choosing it later loads it again.
async function useOwnFile(name, bytes) {
  const value = `file:${name}`;
  const info = await state.client.load(bytes);
  state.files.set(value, bytes);
  if (![...$('model').options].some((o) => o.value === value)) $('model').append(new Option(`${name} (your file)`, value));
  useModel(info, name, value);
  clearError();
  await translate();
}

async function loadOwn(value) {
  setState('busy');
  try {
    await useOwnFile(value.slice(5), state.files.get(value));
  } catch (e) {
    showError(`Could not load ${value.slice(5)}: ${e.message}`);
    showCurrentModel();
  }
}

// After a failed load the model before it still translates: the selector says so again.
function showCurrentModel() {
  $('model').value = state.modelValue;
  setState(state.model ? 'ready' : 'error');
}

// ---- translation ----
// The translation and its maps go when the input they showed is refused.
function clearResult() {
  state.result = null;
  state.results = [];
  state.fig = null;
  $('result').hidden = true;
  $('attention-card').hidden = true;
}

// In the worker, a sentence at a time (a text of several is cut into them, as the CLI cuts
// it); a new request (another text, option or model) cancels one still running.
async function translate() {
  if (!state.model) return;
  const sentence = $('sentence').value;
  if (!sentence.trim()) {
    clearResult();
    showError('Type an English sentence first (the input is empty).');
    setState('error');
    return;
  }
  const a = $('alpha').value.trim();
  setState('busy');
  let rs;
  try {
    rs = await state.client.translateText(sentence, {
      d2lCompat: $('d2l-compat').checked,
      beam: Number($('beam').value),
      alpha: a === '' ? NaN : Number(a),  // the library says what is wrong with a bad value
    });
  } catch (e) {
    if (e instanceof CancelledError) return;  // a newer request took its place
    clearResult();
    showError(e.message);
    setState('error');
    return;
  }
  // Each with its English as typed: the downloaded figure's title quotes it, as the CLI's does.
  if (rs.length === 1) rs[0].sentence = sentence;
  state.results = rs;
  state.result = rs[0];
  state.text = rs.map((x) => x.text).join(' ');
  const r = {  // what the notes below say of the whole text
    unknownChars: [...new Set(rs.flatMap((x) => x.unknownChars))],
    unknown: rs.flatMap((x) => x.unknown),
    subword: rs[0].subword,
    truncated: rs.some((x) => x.truncated),
    S: rs[0].S,
  };
  state.translations += 1;
  document.body.dataset.translations = String(state.translations);
  clearError();
  const notes = [];
  // A sub-word model has a piece for every word made of characters it saw in training: only
  // characters it never saw become <unk> (one piece each).
  if (r.unknownChars.length)
    notes.push(`Character${r.unknownChars.length > 1 ? 's' : ''} never seen in training (the model reads <unk> for each): ${r.unknownChars.join(' ')}`);
  if (r.unknown.length)
    notes.push(`Unknown word${r.unknown.length > 1 ? 's' : ''} (the model reads <unk>): ${r.unknown.join(', ')}`);
  const unit = r.subword ? 'sub-word pieces' : 'tokens';
  if (r.truncated) {
    notes.push(rs.length > 1
      ? `A sentence has more than ${r.S - 1} ${unit}; the model sees only its first ${r.S - 1}, as in the book.`
      : `The sentence has more than ${r.S - 1} ${unit}; the model sees only the first ${r.S - 1}, as in the book.`);
  }
  if (notes.length) showError(notes.join(' · '), 'warn');
  showResult(state.result);
  setState('ready');
}

const drawNW = () => drawNWWith(state.al, state.view.cmap, (message) => {
  $('nw-error').textContent = message;
  $('nw-error').hidden = false;
});

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
    if (v.startsWith('file:')) loadOwn(v);
    else loadShipped(v);
  });
  $('model-file').addEventListener('change', (e) => {
    const file = e.target.files[0];
    if (file) loadFile(file);
    e.target.value = '';
  });
  showExamples(false);
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
  $('heatmap').addEventListener('keydown', onKey);
  $('heatmap').addEventListener('focus', showCursor);
  $('heatmap').addEventListener('blur', hideCursor);
  $('attn-kind').addEventListener('keydown', onTabKey);
  $('table-view').addEventListener('click', toggleTable);
  $('nw-width').addEventListener('input', drawNW);
}

// attnlite.wasm compiled once, for this thread and the translation worker.
async function compileRuntime() {
  const url = new URL('attnlite.wasm', import.meta.url);
  const r = await fetch(url);
  if (!r.ok) throw new Error(`attnlite.wasm: HTTP ${r.status}`);
  try {
    return await WebAssembly.compileStreaming(r);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;  // served without application/wasm: compile the bytes
    return WebAssembly.compile(await (await fetch(url)).arrayBuffer());
  }
}

// attnlite-figures.wasm, the figure renderer, for this thread only (the worker never draws);
// its bytes in the progress bar.
async function compileFigures() {
  const r = await fetch(new URL('attnlite-figures.wasm', import.meta.url));
  if (!r.ok) throw new Error(`attnlite-figures.wasm: HTTP ${r.status}`);
  return WebAssembly.compile(await readCounted('attnlite-figures.wasm', r, false));
}

async function main() {
  attach(state, showError);
  wire();
  // Offline after the first visit (sw.js); pages opened from file: have no service worker.
  if ('serviceWorker' in navigator && location.protocol.startsWith('http')) navigator.serviceWorker.register('sw.js').catch(() => {});
  // The modules compile while the models are listed and the first one downloads.
  const figures = compileFigures();
  figures.catch(() => {});  // reported through starting
  const starting = (async () => {
    const wasm = await compileRuntime();
    state.client = new TranslatorClient(wasm);
    state.al = await Attnlite.create({ wasmModule: wasm, figuresModule: await figures });
  })();
  const available = await probeModels();
  const first = available.length ? download(available[0]) : null;
  first?.catch(() => {});  // reported by loadShipped below
  try {
    await starting;
  } catch (e) {
    showError(`Could not start the WebAssembly module: ${e.message ?? e}`);
    $('model-info').textContent = 'Nothing loaded.';
    setState('error');
    return;
  }
  drawNW();
  lmSection.init(state.al, { scale });
  vitSection.init(state.al, { scale });
  if (!available.length) {
    downloads.clear();
    $('model-progress').hidden = true;
    showError('No shipped model could be fetched from models/. Load a .safetensors file with “Load your own model”.');
    $('model-info').textContent = 'No model loaded.';
    setState('error');
    return;
  }
  // The first model that loads: one this build cannot read is marked and the next tried.
  const failed = [];
  for (const name of available) {
    const err = await loadShipped(name, name === available[0] ? first : null);
    if (!err) break;
    failed.push(`${name} (${err})`);
    const opt = SHOWN.find((m) => m.name === name).option;
    opt.disabled = true;
    opt.textContent += ' (could not load)';
  }
  if (failed.length && state.model) showError(`Could not load ${failed.join(', ')}; showing ${state.modelName} instead.`, 'warn');
  else if (!state.model) $('model-info').textContent = 'No model loaded.';
}

// For the page's tests and for poking at results from the console.
window.attnlitePage = {
  figure: () => state.fig, result: () => state.result, results: () => state.results, view: () => ({ ...state.view }),
  lm: lmSection.debug, vit: vitSection.debug,
  translator: () => ({ restarts: state.client?.restarts, running: state.client?.running, model: state.model }),
  workerHeap: () => state.client.heap(),
};

main();
