// The language-model section of the page: a French prompt continued one word at a time by
// models/lm-fra.safetensors (a decoder-only Transformer, kind "lm"), greedy or sampled, with
// the causal self-attention map growing as the words come. Everything runs in WebAssembly
// through the Generator of attnlite-api.mjs; between two words the page hands control back to
// the browser (one animation frame), so it stays responsive and Stop works. The attention map
// is drawn by lm-map.js.
import { $, readAll, kb, mb } from './ui.js';
import { syncMapControls, drawMap, onMapHover } from './lm-map.js';
import { readOptions, showOptionErrors } from './lm-options.js';

// The shipped language model, fetched relative to the page like the translators (web/models
// links to ../models), and only when Generate is first pressed: it is 3.3 MB.
const MODEL = { name: 'lm-fra', path: 'models/lm-fra.safetensors' };
const EXAMPLES = ['je', 'il est', 'nous allons', 'elle a', 'est-ce que tu', 'mon père'];

const lm = {
  al: null,
  scale: () => 1,
  available: false,   // the model file answers a HEAD request
  loading: null,      // the promise of the model load in progress
  model: null,        // attnlite Model (kind lm)
  gen: null,          // its Generator
  name: '',
  mode: 'greedy',
  run: 0,             // id of the current run: a new run or Stop moves it on
  stopped: 0,         // the run Stop ended
  snap: null,         // the generation shown (copies)
  view: { layer: 0, head: 0, all: false },
  fig: null,          // what the canvas shows
  generations: 0,
  words: [],          // the prompt's words as preprocessed
};

// ---- status ----
function setState(s) {
  document.body.dataset.lmState = s;
}

function message(text, kind = 'error') {
  const box = $('lm-message');
  box.textContent = text;
  box.className = kind === 'warn' ? 'error warn' : 'error';
  box.hidden = !text;
}

function info(text) {
  $('lm-info').textContent = text;
}

function validate() {
  const r = readOptions(lm.mode, lm.gen?.context ?? 32);
  showOptionErrors(r.errors);
  return r;
}

function setMode(mode) {
  lm.mode = mode;
  for (const b of $('lm-mode').querySelectorAll('button')) b.setAttribute('aria-checked', String(b.dataset.mode === mode));
  $('lm-options').classList.toggle('greedy', mode === 'greedy');
  for (const id of ['lm-temperature', 'lm-topk', 'lm-topp', 'lm-seed', 'lm-reseed']) $(id).disabled = mode === 'greedy';
  validate();
}

// ---- the model ----
async function probe() {
  try {
    const r = await fetch(MODEL.path, { method: 'HEAD' });
    lm.available = r.ok;
    if (r.ok) {
      const n = Number(r.headers.get('content-length'));
      info(`${MODEL.name}: ${n > 0 ? `${mb(n)}, ` : ''}downloaded when you first press Generate.`);
    }
  } catch {
    lm.available = false;
  }
  if (!lm.available && !lm.gen) {
    info(`${MODEL.path} is not on this server. Load a language model (.safetensors of kind lm) with “Load your own model” above.`);
    $('lm-generate').disabled = true;
  }
}

async function loadShipped() {
  if (lm.gen) return;
  if (!lm.loading) {
    lm.loading = (async () => {
      setState('loading');
      info(`Downloading ${MODEL.name}…`);
      const r = await fetch(MODEL.path);
      if (!r.ok) throw new Error(`${MODEL.path}: HTTP ${r.status}`);
      const bytes = await readAll(r, (got, total) =>
        info(`Downloading ${MODEL.name}: ${Math.floor((100 * got) / total)}% of ${mb(total)}…`));
      setModel(lm.al.loadModel(bytes), MODEL.name);
    })();
  }
  try {
    await lm.loading;
  } finally {
    lm.loading = null;
  }
}

// A loaded Model of kind 'lm' from elsewhere (a file given to the translator's "Load your
// own model") becomes the section's model; a run in progress ends. Throws for another kind.
export function useModel(model, name) {
  if (model.task !== 'generate') throw new Error(`${name} is a ${model.kind} model, not a language model (kind lm)`);
  if ($('lm-card').classList.contains('running')) {
    lm.run += 1;
    setRunning(false);
    setState('idle');
  }
  setModel(model, name);
}

function setModel(model, name) {
  const gen = model.newGenerator();
  lm.gen?.free();
  lm.model?.free();
  lm.model = model;
  lm.gen = gen;
  lm.name = name;
  lm.snap = null;
  $('lm-result').hidden = true;
  $('lm-generate').disabled = false;
  info(`${name}: decoder-only Transformer · ${model.numLayers} layers · ${model.numHeads} heads · ` +
    `${model.tgtVocabSize.toLocaleString('en')} French words · ${gen.context} positions · ` +
    `${model.isInt8 ? 'int8, ' : ''}${kb(model.weightBytes)} of weights`);
  $('lm-max').max = String(gen.context - 1);
  lm.view.layer = Math.min(lm.view.layer, model.numLayers - 1);
  lm.view.head = Math.min(lm.view.head, model.numHeads - 1);
  validate();
}

// ---- generating ----
// One animation frame (the browser paints the new word), then a task; a hidden tab, where
// frames stop, still moves on after 100 ms.
function nextFrame() {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 100);
    requestAnimationFrame(() => {
      clearTimeout(t);
      setTimeout(resolve, 0);
    });
  });
}

function setRunning(running) {
  $('lm-generate').disabled = running || (!lm.available && !lm.gen);
  $('lm-stop').hidden = !running;
  $('lm-card').classList.toggle('running', running);
}

async function generate() {
  if (!lm.al) return;
  const { options, errors } = validate();
  if (errors.length) {
    $(errors[0].id).focus();
    return;
  }
  const prompt = $('lm-prompt').value;
  if (!prompt.trim()) {
    message('Type the beginning of a French sentence first (the prompt is empty).');
    $('lm-prompt').focus();
    return;
  }
  const run = ++lm.run;
  setRunning(true);
  message('');
  try {
    try {
      await loadShipped();
    } catch (e) {
      message(`Could not load the language model ${MODEL.name}: ${e.message}`);
      info(`${MODEL.name} is not loaded.`);
      setState('error');
      return;
    }
    if (run !== lm.run) {
      if (run === lm.stopped) setState('stopped');  // Stop while the model was downloading
      return;
    }
    const g = lm.gen;
    let ms = 0;
    lm.words = lm.al.tokenize(prompt);
    let t = performance.now();
    try {
      g.start(prompt, options);  // the library's words for what is wrong (empty, too long)
    } catch (e) {
      message(e.message);
      setState('error');
      return;
    }
    ms += performance.now() - t;
    setState('running');
    show(g, { running: !g.done, fresh: true });
    while (!g.done) {
      await nextFrame();
      if (run !== lm.run) break;
      t = performance.now();
      g.step();
      ms += performance.now() - t;
      show(g, { running: !g.done });
    }
    const stopped = run === lm.stopped;
    if (run !== lm.run && !stopped) return;  // a newer run took over
    finish(g, { ms, stopped });
  } finally {
    if (run === lm.run) setRunning(false);
  }
}

function stop() {
  lm.stopped = lm.run;
  lm.run += 1;
  setRunning(false);
}

// Copies what the page shows from the generator (it moves on at the next step).
function snapshot(g) {
  return {
    tokens: g.tokens, probs: g.probs, numPrompt: g.numPrompt, numGenerated: g.numGenerated,
    positions: g.positions, layers: g.layers, heads: g.heads, ld: g.ld, attention: g.attention,
    eos: g.eos, done: g.done, text: g.text, continuation: g.continuation, context: g.context,
    options: g.options, unknown: g.unknown, numUnknown: g.numUnknown, words: lm.words,
  };
}

function show(g, { running, fresh = false }) {
  const s = snapshot(g);
  lm.snap = s;
  $('lm-result').hidden = false;
  if (fresh) {
    $('lm-tokens').textContent = '';
    if (s.unknown.length)
      message(`Not in the model's vocabulary, read as <unk>: ${s.unknown.join(', ')}`, 'warn');
  }
  showText(s, running);
  showTokens(s);
  $('lm-result-info').textContent = running ? `generating… ${s.numGenerated} new token${s.numGenerated > 1 ? 's' : ''}` : '';
  syncMapControls(lm);
  drawMap(lm, running, message);
}

function showText(s, running) {
  const box = $('lm-text');
  box.textContent = '';
  // the prompt as typed (preprocessed), unknown words marked: the model reads them as <unk>
  const prompt = document.createElement('span');
  prompt.className = 'prompt';
  for (let i = 0; i < s.numPrompt; ++i) {
    if (i) prompt.append(' ');
    const w = document.createElement('span');
    w.textContent = s.words[i] ?? s.tokens[1 + i];
    if (s.tokens[1 + i] === '<unk>') {
      w.className = 'unk';
      w.title = 'not in the vocabulary: the model reads <unk>';
    }
    prompt.append(w);
  }
  const cont = document.createElement('span');
  cont.className = 'continuation';
  cont.textContent = s.continuation ? ` ${s.continuation}` : '';
  box.append(prompt, cont);
  if (running) {
    const caret = document.createElement('span');
    caret.className = 'caret';
    caret.setAttribute('aria-hidden', 'true');
    box.append(caret);
  }
}

// One chip per generated token with its probability; chips already there stay (only the
// new one is added, so each word appears as it comes).
function showTokens(s) {
  const box = $('lm-tokens');
  const want = s.numGenerated;
  if (box.children.length > want) box.textContent = '';
  for (let k = box.children.length; k < want; ++k) {
    const chip = document.createElement('span');
    const tok = s.tokens[1 + s.numPrompt + k], p = s.probs[k];
    chip.className = tok === '<eos>' ? 'token gen eos new' : 'token gen new';
    chip.title = `token ${k + 1}: p = ${p.toFixed(4)} (softmax of the logits, before temperature and cuts)`;
    chip.innerHTML = '<b></b><small></small><i></i>';
    chip.querySelector('b').textContent = tok;
    chip.querySelector('small').textContent = p.toFixed(3);
    chip.querySelector('i').style.width = `${(p * 100).toFixed(1)}%`;
    for (const old of box.querySelectorAll('.new')) old.classList.remove('new');
    box.append(chip);
  }
}

function finish(g, { ms, stopped }) {
  const s = lm.snap;
  if (!s) return;
  s.done = true;
  showText(s, false);
  const n = s.numGenerated;
  const why = stopped ? 'stopped by you'
    : s.eos ? 'stopped at <eos>'
      : s.numPrompt + 1 + n >= s.context + 1 ? `stopped: the ${s.context} positions are full`
        : `stopped at the maximum of ${s.options.maxTokens} token${s.options.maxTokens > 1 ? 's' : ''}`;
  const o = s.options;
  const how = o.sample
    ? `sampled: temperature ${o.temperature}, top-k ${o.topK || 'off'}, top-p ${o.topP < 1 ? o.topP : 'off'}, seed ${o.seed}`
    : 'greedy';
  // Perplexity of the new tokens: exp(mean -log p), p at temperature 1 before any cut.
  const ppl = n ? Math.exp(-Array.from(s.probs).reduce((a, p) => a + Math.log(Math.max(p, 1e-30)), 0) / n) : NaN;
  $('lm-result-info').textContent = `${n} new token${n === 1 ? '' : 's'}, ${why} · ${how}` +
    (n ? ` · perplexity of the new tokens ${ppl.toFixed(2)}` : '') +
    ` · ${(ms / Math.max(n, 1)).toFixed(1)} ms per token in WebAssembly`;
  lm.generations += 1;
  document.body.dataset.lmGenerations = String(lm.generations);
  setState(stopped ? 'stopped' : 'done');
  if (stopped) drawMap(lm, false, message);  // at the screen's density, with the caption of a finished run
}

// ---- wiring ----
export function init(al, { scale }) {
  lm.al = al;
  lm.scale = scale;
  $('lm-generate').disabled = false;
  probe();
}

export function wire() {
  setState('idle');
  $('lm-generate').disabled = true;  // until the module is there
  $('lm-form').addEventListener('submit', (e) => {
    e.preventDefault();
    generate();
  });
  $('lm-stop').addEventListener('click', stop);
  $('lm-mode').addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (b) setMode(b.dataset.mode);
  });
  for (const id of ['lm-temperature', 'lm-topk', 'lm-topp', 'lm-seed', 'lm-max']) {
    $(id).addEventListener('input', validate);
    $(id).addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        generate();
      }
    });
  }
  $('lm-reseed').addEventListener('click', () => {
    const a = new Uint32Array(2);
    crypto.getRandomValues(a);
    $('lm-seed').value = String(a[0] % 1000000);
    validate();
    generate();
  });
  for (const s of EXAMPLES) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip';
    b.textContent = s;
    b.addEventListener('click', () => {
      $('lm-prompt').value = s;
      generate();
    });
    $('lm-examples').append(b);
  }
  const redraw = () => {
    lm.view.layer = Number($('lm-layer').value);
    lm.view.head = Number($('lm-head').value);
    lm.view.all = $('lm-all-heads').checked;
    syncMapControls(lm);
    drawMap(lm, false, message);
  };
  for (const id of ['lm-layer', 'lm-head', 'lm-all-heads']) $(id).addEventListener('change', redraw);
  $('lm-heatmap').addEventListener('mousemove', (e) => onMapHover(lm, e));
  $('lm-heatmap').addEventListener('pointerdown', (e) => onMapHover(lm, e));  // touch screens: tap a cell
  $('lm-heatmap').addEventListener('mouseleave', () => {
    $('lm-tooltip').hidden = true;
  });
  let resize = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resize);
    resize = setTimeout(() => {
      if (!lm.snap || $('lm-card').classList.contains('running')) return;
      syncMapControls(lm);
      drawMap(lm, false, message);
    }, 150);
  });
  setMode('greedy');
}

// For the page's tests and the console.
export const debug = {
  snapshot: () => lm.snap,
  figure: () => lm.fig,
  view: () => ({ ...lm.view }),
  mode: () => lm.mode,
};
