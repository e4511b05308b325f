// The Vision Transformer section of the page: a digit drawn on a canvas (mouse, pen or finger)
// is classified by models/vit-digits.safetensors (kind "vit": 8x8 images, 2x2 patches, so 16
// patch tokens and a CLS token) while it is drawn. The canvas goes through the library's
// digits preprocessing (al_digit_from_rgba: the same digit_8x8 as `attnlite classify` on an
// image file), the 8x8 input is shown beside it with the probabilities of the ten classes, and
// the CLS token's attention over the patches is drawn over the input for a layer and head (or
// all heads of a layer), with the attention rollout beside it.
import { Classifier } from './attnlite-api.mjs';
import { DrawPad } from './draw-pad.js';
import { $, fillSelect, kb } from './ui.js';
import { drawInput, drawOverlay, panel, maxInfo, paintInput } from './vit-figures.js';

// The shipped model, fetched relative to the page like the other models (web/models links to
// ../models), when a digit is first drawn or picked.
const MODEL = { name: 'vit-digits', path: 'models/vit-digits.safetensors' };

// One digit of each class from the model's test split (sklearn's load_digits; the same as
// tests/fixtures/digits/idx*_label*_8x8.png): label, index in load_digits, and the 64 values
// 0..16 row-major as base-17 digits (0-9, a-g).
const TEST_DIGITS = [
  [0, 36, '006ea20000ffdf3002ga0d9001g50c5000g30d6001f56d1000gbea00007gb100'],
  [1, 47, '0001b9000007gd00004eg9000agbg8000003g6000003g8000005ga000002e600'],
  [2, 22, '008g500001dbg00000a0d3000031g1000009c000003f500000ef8830007cccd1'],
  [3, 45, '009gd6000065gg000008f5000005e30000009f2000000bc00048bfc000bec800'],
  [4, 14, '0008f100001ed11000af3fb007g71g8009gdeg5001afge000001ga00000af400'],
  [5, 32, '02dgggb005ga541006g7300009ggg6000384bf000001cf00004dg60002gf8000'],
  [6, 6, '000cd000005g800000dg300000ed000000fc720000dgdg30007gbf800019fb30'],
  [7, 137, '002ff300008egb000000be000000be30004cgg7000bgc100001e6000004c1000'],
  [8, 18, '00a7d900009acf20004bab00001ga10000cd400000c1c00001a2e00000be5000'],
  [9, 139, '005f500000cbd80000b9ag00003fgg1000000e6000000d8000630e60002dgf30'],
].map(([label, index, s]) => ({ label, index, values: Float32Array.from(s, (ch) => parseInt(ch, 17)) }));

const vit = {
  al: null,
  scale: () => 1,
  available: false,
  loading: null,
  model: null,
  cls: null,
  input: null,        // the 8x8 input last classified (Float32Array 64, 0..16)
  result: null,       // { label, prob, probs, ... } of that input
  attention: null,    // [layer] Float32Array (NH, T, T)
  rollout: null,      // Float32Array (T, T)
  source: '',         // 'drawing' or 'test digit N'
  view: { layer: 0, head: 0, all: true },
  pending: false,     // a classification is scheduled for the next animation frame
  strokes: 0,
  classifications: 0,
  ink: false,         // anything drawn since the last clear
};

function setState(s) {
  document.body.dataset.vitState = s;
}

function message(text, kind = 'error') {
  const box = $('vit-message');
  box.textContent = text;
  box.className = kind === 'warn' ? 'error warn' : 'error';
  box.hidden = !text;
}

const pct = (p) => (p >= 0.9995 ? '100%' : p < 0.0005 ? '0%' : `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`);

// ---- the model ----
async function probe() {
  try {
    const r = await fetch(MODEL.path, { method: 'HEAD' });
    vit.available = r.ok;
    if (r.ok) {
      const n = Number(r.headers.get('content-length'));
      $('vit-info').textContent = `${MODEL.name}${n > 0 ? ` (${kb(n)})` : ''} is downloaded when you first draw or pick a digit.`;
    }
  } catch {
    vit.available = false;
  }
  if (!vit.available && !vit.cls)
    $('vit-info').textContent = `${MODEL.path} is not on this server. Load a Vision Transformer (.safetensors of kind vit) with “Load your own model” above.`;
}

async function ensureModel() {
  if (vit.cls) return true;
  if (!vit.al) return false;
  if (!vit.loading) {
    vit.loading = (async () => {
      setState('loading');
      $('vit-info').textContent = `Downloading ${MODEL.name}…`;
      const r = await fetch(MODEL.path);
      if (!r.ok) throw new Error(`${MODEL.path}: HTTP ${r.status}`);
      setModel(vit.al.loadModel(new Uint8Array(await r.arrayBuffer())), MODEL.name);
    })();
  }
  try {
    await vit.loading;
    return true;
  } catch (e) {
    message(`Could not load the model ${MODEL.name}: ${e.message}`);
    setState('error');
    return false;
  } finally {
    vit.loading = null;
  }
}

// A loaded Model of kind 'vit' from elsewhere (the translator's "Load your own model") becomes
// the section's model. Throws for another kind.
export function useModel(model, name) {
  if (model.task !== 'classify') throw new Error(`${name} is a ${model.kind} model, not a Vision Transformer (kind vit)`);
  setModel(model, name);
  if (vit.ink) classifyNow();
}

function setModel(model, name) {
  const cls = new Classifier(model);
  if (cls.channels !== 1 || cls.imageSize !== 8) {
    cls.free();
    throw new Error(`${name} reads ${cls.channels} x ${cls.imageSize} x ${cls.imageSize} images; this section draws 8x8 digits`);
  }
  vit.cls?.free();
  vit.model?.free();
  vit.model = model;
  vit.cls = cls;
  vit.result = null;
  const L = model.numLayers, NH = model.numHeads, P = cls.tokens - 1;
  $('vit-info').textContent = `${name}: Vision Transformer · ${L} layers · ${NH} heads · ${P} patches of ` +
    `${8 / Math.round(Math.sqrt(P))}×${8 / Math.round(Math.sqrt(P))} pixels + a CLS token · ${cls.numClasses} classes · ${kb(model.weightBytes)} of weights`;
  fillSelect($('vit-layer'), L, 'layer', vit.view.layer);
  fillSelect($('vit-head'), NH, 'head', vit.view.head);
  vit.view.layer = Number($('vit-layer').value);
  vit.view.head = Number($('vit-head').value);
  setState('ready');
}

// ---- drawing ----
let pad = null;  // the DrawPad

function clearPad() {
  pad.clear();
  vit.ink = false;
  vit.input = null;
  vit.result = null;
  vit.source = '';
  showEmpty();
}

function wirePad() {
  pad = new DrawPad($('vit-draw'), {
    onStroke: () => {
      if (vit.source.startsWith('test')) clearPad();  // a new drawing replaces a picked digit
      vit.ink = true;
      vit.source = 'drawing';
      vit.strokes += 1;
    },
    onChange: schedule,
  });
  clearPad();
  $('vit-clear').addEventListener('click', clearPad);
}

// Puts a test digit on the pad as its 8x8 blocks: the pad then goes through the same
// preprocessing as a drawing.
function pickDigit(d) {
  pad.paint8x8(d.values);
  vit.ink = true;
  vit.source = `test digit ${d.label}`;
  vit.picked = d;
  schedule();
}

// At most one classification per animation frame while drawing.
function schedule() {
  if (vit.pending) return;
  vit.pending = true;
  requestAnimationFrame(async () => {
    if (!vit.cls && !(await ensureModel())) {
      vit.pending = false;
      return;
    }
    vit.pending = false;
    classifyNow();
  });
}

function classifyNow() {
  if (!vit.cls || !vit.ink) return;
  try {
    const input = vit.al.digitFromRgba(pad.pixels());
    vit.input = input;
    if (!input.some((v) => v > 0)) {  // nothing the preprocessing counts as ink
      vit.result = null;
      showEmpty();
      return;
    }
    vit.result = vit.cls.classify(input);
    vit.attention = Array.from({ length: vit.result.layers }, (_, l) => vit.cls.attention(l));
    vit.rollout = vit.cls.rollout();
    vit.classifications += 1;
    message('');
    show();
  } catch (e) {
    message(`Could not classify the drawing: ${e.message}`);
  }
}

// ---- showing ----
function showEmpty() {
  drawInput($('vit-input'), null, vit.scale());
  $('vit-label').textContent = '?';
  $('vit-prob').textContent = vit.cls ? 'Draw a digit' : '';
  $('vit-card').dataset.label = '';
  for (let k = 0; k < 10; ++k) setBar(k, 0, false);
  $('vit-attn').hidden = true;
}

function setBar(k, p, top) {
  const li = $('vit-bars').children[k];
  if (!li) return;
  li.classList.toggle('best', top);
  li.querySelector('i').style.width = `${(100 * p).toFixed(2)}%`;
  li.querySelector('span.p').textContent = pct(p);
}

function show() {
  const r = vit.result;
  drawInput($('vit-input'), vit.input, vit.scale());
  $('vit-label').textContent = r.name;
  $('vit-prob').textContent = `${pct(r.prob)} sure`;
  $('vit-card').dataset.label = r.name;
  for (let k = 0; k < 10; ++k) setBar(k, r.probs[k] ?? 0, k === r.label);
  $('vit-attn').hidden = false;
  syncControls();
  drawAttention();
}

// The CLS row (query 0) over the patches (keys 1..T-1) of layer l, head h; and of the rollout.
function clsRow(l, h) {
  const T = vit.cls.tokens, a = vit.attention[l];
  return a.slice((h * T) * T + 1, (h * T) * T + T);
}
function rolloutRow() {
  return vit.rollout.slice(1, vit.cls.tokens);
}

// The panels' side in CSS pixels for n panels (heads + the rollout) in a width: the gaps
// between panels (14 px), between the heads and the rollout (26 px, and its 20 px indent on
// wide screens) and the borders (2 px a panel) come off first.
function panelSide(n, width) {
  const gaps = 14 * Math.max(0, n - 2) + 26 + (window.innerWidth > 640 ? 20 : 0) + 2 * n;
  return Math.floor((width - gaps) / n);
}

// All heads side by side when the card has room for them and the rollout at 120 px each.
function allHeadsFit() {
  const NH = vit.result?.heads ?? 4;
  return panelSide(NH + 1, $('vit-attn').clientWidth) >= 120;
}

function syncControls() {
  const fits = allHeadsFit();
  $('vit-all-heads').disabled = !fits;
  $('vit-all-note').hidden = fits;
  const all = vit.view.all && fits;
  $('vit-head').disabled = all;
  $('vit-head').closest('label').classList.toggle('off', all);
}

// Hover (or tap) a patch of an overlay: its weight in the readout under the figures.
function hoverPanel(c, title, weights) {
  const g = Math.round(Math.sqrt(weights.length)), side = 8 / g;
  const read = (e) => {
    const r = c.getBoundingClientRect();
    const col = Math.min(g - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * g)));
    const row = Math.min(g - 1, Math.max(0, Math.floor(((e.clientY - r.top) / r.height) * g)));
    const px = (i) => (side === 1 ? `${i * side + 1}` : `${i * side + 1}–${(i + 1) * side}`);
    $('vit-hover').textContent = `${title}: patch (${row + 1}, ${col + 1}), rows ${px(row)}, columns ${px(col)} of the 8×8 image: ` +
      `weight ${weights[row * g + col].toFixed(3)}`;
  };
  c.addEventListener('pointermove', read);
  c.addEventListener('pointerdown', read);
}

function drawAttention() {
  if (!vit.result) return;
  const figs = $('vit-figs');
  figs.replaceChildren();
  const NH = vit.result.heads, l = vit.view.layer;
  const all = vit.view.all && allHeadsFit();
  const heads = all ? Array.from({ length: NH }, (_, h) => h) : [vit.view.head];
  const n = heads.length + 1;
  const width = $('vit-attn').clientWidth;
  const css = Math.max(100, Math.min(all ? 150 : 200, panelSide(n, width)));
  const heads_ = document.createElement('div');
  heads_.className = 'vit-group';
  figs.append(heads_);
  for (const h of heads) {
    const w = clsRow(l, h), title = `Layer ${l + 1}, head ${h + 1}`, c = panel(heads_, title, maxInfo(w));
    drawOverlay(c, css, w, vit.input, vit.scale());
    hoverPanel(c, title, w);
  }
  const ro = document.createElement('div');
  ro.className = 'vit-group rollout';
  figs.append(ro);
  const r = rolloutRow(), rc = panel(ro, 'Rollout, all layers', maxInfo(r));
  drawOverlay(rc, css, r, vit.input, vit.scale());
  hoverPanel(rc, 'Rollout', r);
  $('vit-hover').textContent = 'Hover or tap a patch to read its weight.';
  const T = vit.cls.tokens, self = vit.attention[l];
  const clsSelf = heads.map((h) => self[(h * T) * T]);
  $('vit-attn-caption').textContent = `What the CLS token (the one the class is read from) attends to in layer ${l + 1}` +
    `${all ? ', every head' : `, head ${heads[0] + 1}`}: each of the ${T - 1} patches tinted by its weight, the strongest ` +
    `at full tint. The rest goes to the CLS token itself (${clsSelf.map((v) => v.toFixed(2)).join(', ')}). ` +
    `The rollout multiplies the heads' mean attention (plus the residual path) through all ${vit.result.layers} layers: ` +
    `what the class is read from, all in all (CLS itself: ${vit.rollout[0].toFixed(2)}).`;
}

// ---- wiring ----
export function init(al, { scale }) {
  vit.al = al;
  vit.scale = scale;
  probe();
  showEmpty();
  if (vit.ink) schedule();  // drawn while the module was still loading
}

export function wire() {
  setState('idle');
  const bars = $('vit-bars');
  for (let k = 0; k < 10; ++k) {
    const li = document.createElement('li');
    li.innerHTML = `<span class="k">${k}</span><span class="bar"><i></i></span><span class="p">0%</span>`;
    bars.append(li);
  }
  wirePad();
  for (const d of TEST_DIGITS) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip digit-chip';
    b.title = `A ${d.label} from the test split (load_digits image ${d.index}), never seen in training`;
    b.dataset.label = String(d.label);
    const c = document.createElement('canvas');
    c.width = c.height = 8;
    paintInput(c.getContext('2d'), d.values);
    b.append(c, document.createTextNode(String(d.label)));
    b.addEventListener('click', () => pickDigit(d));
    $('vit-examples').append(b);
  }
  const redraw = () => {
    vit.view.layer = Number($('vit-layer').value);
    vit.view.head = Number($('vit-head').value);
    vit.view.all = $('vit-all-heads').checked;
    syncControls();
    drawAttention();
  };
  for (const id of ['vit-layer', 'vit-head', 'vit-all-heads']) $(id).addEventListener('change', redraw);
  let resize = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resize);
    resize = setTimeout(() => {
      if (!vit.result) return;
      syncControls();
      drawAttention();
    }, 150);
  });
}

// For the page's tests and the console.
export const debug = {
  result: () => (vit.result ? { ...vit.result, probs: Array.from(vit.result.probs) } : null),
  input: () => (vit.input ? Array.from(vit.input) : null),
  rollout: () => (vit.rollout ? Array.from(vit.rollout) : null),
  view: () => ({ ...vit.view }),
  source: () => vit.source,
  classifications: () => vit.classifications,
  loaded: () => !!vit.cls,
  testDigits: TEST_DIGITS.map((d) => ({ label: d.label, index: d.index, values: Array.from(d.values) })),
};
