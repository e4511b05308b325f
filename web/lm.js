// The language-model section of the page: a French prompt continued one word at a time by
// models/lm-fra.safetensors (a decoder-only Transformer, kind "lm"), greedy or sampled, with
// the causal self-attention map growing as the words come. Everything runs in WebAssembly
// through the Generator of attnlite-api.mjs; between two words the page hands control back to
// the browser (one animation frame), so it stays responsive and Stop works.
const $ = (id) => document.getElementById(id);

// The shipped language model, fetched relative to the page like the translators (web/models
// links to ../models), and only when Generate is first pressed: it is 3.3 MB.
const MODEL = { name: 'lm-fra', path: 'models/lm-fra.safetensors' };
const EXAMPLES = ['je', 'il est', 'nous allons', 'elle a', 'est-ce que tu', 'mon père'];
const U64_MAX = (1n << 64n) - 1n;

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

const kb = (n) => `${Math.round(n / 1024).toLocaleString('en')} KB`;
const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;

// ---- options ----
// The options as the Generator takes them, and what is wrong with the fields, each message
// naming the field, the allowed values and what was typed.
function readOptions() {
  const errors = [];
  const field = (id) => {
    const el = $(id);
    // A number input holding text that is not a number reports '' as its value.
    return { el, raw: el.value.trim(), bad: el.validity?.badInput };
  };
  const shown = (f) => (f.bad ? 'not a number' : f.raw === '' ? 'empty' : `“${f.raw}”`);
  const ctx = lm.gen?.context ?? 32;
  const o = { sample: lm.mode === 'sample', attention: true, maxTokens: 0 };
  const mx = field('lm-max');
  if (mx.bad || (mx.raw !== '' && !(/^\d+$/.test(mx.raw) && +mx.raw >= 1 && +mx.raw <= ctx - 1)))
    errors.push({ id: 'lm-max', text: `Max tokens must be a whole number from 1 to ${ctx - 1}, or empty for no limit (got ${shown(mx)}).` });
  else o.maxTokens = mx.raw === '' ? 0 : +mx.raw;
  if (o.sample) {
    const t = field('lm-temperature');
    if (t.bad || t.raw === '' || !Number.isFinite(+t.raw) || !(+t.raw > 0))
      errors.push({ id: 'lm-temperature', text: `Temperature must be a number above 0, such as 0.8 (got ${shown(t)})` +
        (t.raw !== '' && +t.raw === 0 ? '; for always the likeliest word choose Greedy.' : '.') });
    else o.temperature = +t.raw;
    const k = field('lm-topk');
    if (k.bad || !/^\d+$/.test(k.raw))
      errors.push({ id: 'lm-topk', text: `Top-k must be a whole number, 0 or more; 0 keeps every word (got ${shown(k)}).` });
    else o.topK = Math.min(+k.raw, 1 << 20);
    const p = field('lm-topp');
    if (p.bad || p.raw === '' || !(+p.raw > 0 && +p.raw <= 1))
      errors.push({ id: 'lm-topp', text: `Top-p must be a number above 0 and at most 1; 1 keeps every word (got ${shown(p)}).` });
    else o.topP = +p.raw;
    const s = field('lm-seed');
    if (!/^\d+$/.test(s.raw) || BigInt(s.raw) > U64_MAX)
      errors.push({ id: 'lm-seed', text: `Seed must be a whole number from 0 to ${U64_MAX} (got ${shown(s)}).` });
    else o.seed = BigInt(s.raw);
  }
  return { options: o, errors };
}

function showOptionErrors(errors) {
  for (const id of ['lm-max', 'lm-temperature', 'lm-topk', 'lm-topp', 'lm-seed'])
    $(id).setAttribute('aria-invalid', String(errors.some((e) => e.id === id)));
  const list = $('lm-option-errors');
  list.textContent = '';
  for (const e of errors) {
    const li = document.createElement('li');
    li.textContent = e.text;
    li.dataset.field = e.id;
    list.append(li);
  }
  list.hidden = errors.length === 0;
  $('lm-generate').classList.toggle('blocked', errors.length > 0);
}

function validate() {
  const r = readOptions();
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

// The response's bytes, reporting progress when the size is known.
async function readAll(response, progress) {
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
  if (model.kind !== 'lm') throw new Error(`${name} is a ${model.kind} model, not a language model (kind lm)`);
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
  syncControls();
  draw(running);
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
  if (stopped) draw(false);  // at the screen's density, with the caption of a finished run
}

// ---- the attention map ----
function syncControls() {
  const s = lm.snap, v = lm.view;
  if (!s) return;
  fill($('lm-layer'), s.layers, 'Layer', v.layer);
  fill($('lm-head'), s.heads, 'Head', v.head);
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

function fill(sel, n, word, value) {
  if (sel.options.length !== n) {
    sel.textContent = '';
    for (let i = 0; i < n; ++i) sel.append(new Option(`${word} ${i + 1}`, String(i)));
  }
  sel.value = String(Math.min(value, n - 1));
}

// Room for the figure: the width of the result area, in CSS pixels.
const room = () => Math.max(240, $('lm-result').clientWidth || 300);
// The all-heads grid: at least 110 px per panel, four heads side by side.
const gridFits = () => room() >= 150 + 4 * 140;

// The figure: rows x cols panels of P x P weights (P = positions read), NaN above the
// diagonal (the renderer leaves those cells white; they are hatched afterwards).
function figure() {
  const s = lm.snap, v = lm.view, P = s.positions, ld = s.ld;
  const layers = v.all ? [...Array(s.layers).keys()] : [v.layer];
  const heads = v.all ? [...Array(s.heads).keys()] : [v.head];
  const mats = new Float32Array(layers.length * heads.length * P * P);
  const panels = [];
  let o = 0;
  for (const l of layers) {
    for (const h of heads) {
      const base = (l * s.heads + h) * ld * ld;
      for (let q = 0; q < P; ++q) for (let k = 0; k < P; ++k) mats[o++] = k > q ? NaN : s.attention[base + q * ld + k];
      panels.push({ l, h });
    }
  }
  const labels = s.tokens.slice(0, P);
  return { mats, rows: layers.length, cols: heads.length, q: P, k: P, labels, panels, layers, heads };
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

function draw(streaming) {
  const s = lm.snap;
  if (!s || !s.attention || s.positions < 1) return;
  const v = lm.view, f = figure();
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
  c.width = img.width;
  c.height = img.height;
  c.style.width = `${img.width / sc}px`;
  c.style.height = `${img.height / sc}px`;
  const ctx = c.getContext('2d');
  ctx.putImageData(new ImageData(img.data, img.width, img.height), 0, 0);
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
  const rl = $('lm-row-labels');
  rl.textContent = '';
  $('lm-heatmap-box').classList.toggle('all', v.all);
  if (v.all) {
    f.layers.forEach((l, i) => {
      const P = L.panels[i * f.cols];
      const d = document.createElement('div');
      d.textContent = `Layer ${l + 1}`;
      d.style.top = `${(P.y + P.h / 2) / sc}px`;
      rl.append(d);
    });
  }
  const where = v.all ? `all ${f.rows} layers × ${f.cols} heads` : `layer ${v.layer + 1}, head ${v.head + 1}`;
  $('lm-caption').textContent = `Causal self-attention, ${where}: row q is the word at position q, reading the words ` +
    `up to it (columns) to predict the next word. Each row sums to 1. ${f.q} position${f.q > 1 ? 's' : ''} read: ` +
    `<bos>, the prompt${s.numGenerated > 1 ? ' and the words fed back' : ''}${s.done ? '; the last word chosen is never read' : ''}.`;
  $('lm-tooltip').hidden = true;
  $('lm-hover').textContent = 'Hover or tap a cell to read its weight.';
  $('lm-hover').classList.add('muted');
}

function onHover(e) {
  const f = lm.fig;
  if (!f) return;
  const c = $('lm-heatmap');
  const x = Math.floor((e.offsetX * c.width) / c.clientWidth), y = Math.floor((e.offsetY * c.height) / c.clientHeight);
  const hit = f.layout.cellAt(x, y);
  const tip = $('lm-tooltip');
  if (!hit) {
    tip.hidden = true;
    return;
  }
  const p = hit.row * f.cols + hit.col;
  const { l, h } = f.panels[p];
  const w = f.mats[(p * f.q + hit.q) * f.k + hit.k];
  const masked = hit.k > hit.q;
  const value = masked ? 'masked' : w.toFixed(4);
  $('lm-hover').textContent = `layer ${l + 1}, head ${h + 1}: ${f.labels[hit.q]} (position ${hit.q}) → ` +
    `${f.labels[hit.k]} (position ${hit.k})  ${masked ? 'masked: a word never sees the words after it' : value}`;
  $('lm-hover').classList.remove('muted');
  tip.innerHTML = '<span class="q"></span> → <span class="k"></span><b></b>';
  tip.querySelector('.q').textContent = f.labels[hit.q];
  tip.querySelector('.k').textContent = f.labels[hit.k];
  tip.querySelector('b').textContent = value;
  tip.hidden = false;
  const box = $('lm-heatmap-box');
  // keep the tooltip inside the figure on narrow screens
  const left = Math.min(c.offsetLeft + e.offsetX + 14, Math.max(0, box.clientWidth - tip.offsetWidth - 4));
  tip.style.left = `${left}px`;
  tip.style.top = `${c.offsetTop + e.offsetY + 14}px`;
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
    syncControls();
    draw(false);
  };
  for (const id of ['lm-layer', 'lm-head', 'lm-all-heads']) $(id).addEventListener('change', redraw);
  $('lm-heatmap').addEventListener('mousemove', onHover);
  $('lm-heatmap').addEventListener('pointerdown', onHover);  // touch screens: tap a cell
  $('lm-heatmap').addEventListener('mouseleave', () => {
    $('lm-tooltip').hidden = true;
  });
  let resize = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resize);
    resize = setTimeout(() => {
      if (!lm.snap || $('lm-card').classList.contains('running')) return;
      syncControls();
      draw(false);
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
