// The language-model section's options: the fields read into the Generator's options (mode
// 'greedy' or 'sample', ctx the model's context) with a message for each bad field, and those
// messages shown by their fields.
import { $ } from './ui.js';

const U64_MAX = (1n << 64n) - 1n;

// The options as the Generator takes them, and what is wrong with the fields, each message
// naming the field, the allowed values and what was typed.
export function readOptions(mode, ctx) {
  const errors = [];
  const field = (id) => {
    const el = $(id);
    // A number input holding text that is not a number reports '' as its value.
    return { el, raw: el.value.trim(), bad: el.validity?.badInput };
  };
  const shown = (f) => (f.bad ? 'not a number' : f.raw === '' ? 'empty' : `“${f.raw}”`);
  const o = { sample: mode === 'sample', attention: true, maxTokens: 0 };
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

export function showOptionErrors(errors) {
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
