// attnlite JS API: the error type, the session limits and the argument checks every class
// shares (see ../attnlite-api.mjs for the API as a whole).

export class AttnliteError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AttnliteError';
  }
}

export const STYLES = { line: 0, dashed: 1, dashdot: 2, dotted: 3, points: 4 };

// The page's session limits (al_limits): decoding can go past the model's num_steps when
// asked (maxSteps), up to 64 steps, which keeps the buffers small (the decoder
// self-attention weights grow with its square); beams up to 8 hypotheses: for the book's
// Transformer 3.1 MB of buffers instead of 0.2 MB, for its Bahdanau GRU 0.4 MB instead of
// 27 KB, for a 3-layer, 128-wide Transformer with 24000 French tokens 7.2 MB, not 0.7 MB.
export const MAX_STEPS = 64, MAX_BEAM = 8, MAX_ALPHA = 2, MAX_INPUT_BYTES = 4096;

export const words = (s) => (s ? s.split(' ') : []);
// Argument checks: a string (a TypeError otherwise) of at most MAX_INPUT_BYTES bytes of
// UTF-8 (the library's own message otherwise, thrown before anything is copied into WASM
// memory, which never shrinks), and an options object (undefined: the defaults).
export const typeName = (v) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object'
  : v === undefined ? 'undefined' : `a ${typeof v}`);
// units: the bytes of a string longer than this many UTF-16 units are counted here; shorter
// ones go to the library, which counts them with the same message (default: up to 4096
// units, at most 12 KB of UTF-8).
export function text(al, v, call, what = 'sentence', units = MAX_INPUT_BYTES) {
  if (typeof v !== 'string') throw new TypeError(`${call}: the ${what} must be a string, got ${typeName(v)}`);
  const n = v.length > units ? al.mod.lengthBytesUTF8(v) : 0;
  if (n > MAX_INPUT_BYTES) throw new AttnliteError(`${what} is too long: ${n} bytes (limit ${MAX_INPUT_BYTES})`);
  return v;
}
// A list of texts (translateBatch's sentences): an array (a TypeError otherwise) of strings
// that each pass text(), the failing one named by its index (a hole in the array is
// undefined). Each string's UTF-8 bytes are counted here whenever they could pass the limit,
// so that a list is refused before any of it is copied into WASM memory.
export function texts(al, list, call, what = 'sentences') {
  if (!Array.isArray(list)) throw new TypeError(`${call}: ${what} must be an array of strings, got ${typeName(list)}`);
  for (let i = 0; i < list.length; ++i) {
    const v = list[i];
    if (typeof v !== 'string') throw new TypeError(`${call}: ${what}[${i}] must be a string, got ${typeName(v)}`);
    try {
      text(al, v, call, 'sentence', MAX_INPUT_BYTES / 3);  // a UTF-16 unit is 3 bytes at most
    } catch (e) {
      throw listError(call, what, i, e.message);
    }
  }
  return list;
}
// The error of entry i of a list: `translateBatch: sentences[3]: empty sentence`.
export const listError = (call, what, i, message) => new AttnliteError(`${call}: ${what}[${i}]: ${message}`);
// The same for an item the library refused in a batch call, whose message names the item by
// its place in the call (`sentence 1 of 8: empty sentence`): the reason is all that follows
// the first ': ', colons included (the whole message when it has none).
export const refusedError = (call, what, i, message) => {
  const at = message.indexOf(': ');
  return listError(call, what, i, at < 0 ? message : message.slice(at + 2));
};
// A session's size option (al.loadModel's maxBatch and maxBeam, the Classifier's maxBatch):
// absent (undefined or null: the default) or an integer in [1, max].
export const MAX_BATCH = 4096;
export function sizeOption(o, key, max, fallback, call) {
  const v = o[key] ?? fallback;
  if (!(Number.isInteger(v) && v >= 1 && v <= max))
    throw new AttnliteError(`${call}: ${key} must be an integer in [1, ${max}], got ${typeof v === 'number' ? g(v) : typeName(v)}`);
  return v;
}
export const batchSize = (o, call, fallback = 1) => sizeOption(o, 'maxBatch', MAX_BATCH, fallback, call);
// A boolean option (undefined: the fallback), e.g. classifyBatch's attention.
export function flag(o, key, fallback, call) {
  const v = o[key] ?? fallback;
  if (typeof v !== 'boolean') throw new TypeError(`${call}: ${key} must be true or false, got ${typeName(v)}`);
  return v;
}
export function optionsOf(o, call) {
  if (o === undefined) return {};
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw new TypeError(`${call}: options must be an object, got ${typeName(o)}`);
  return o;
}
// printf's %g for the messages (the C library's wording of nan and inf).
export const g = (x) => (Number.isNaN(x) ? 'nan' : x === Infinity ? 'inf' : x === -Infinity ? '-inf'
  : String(Number(x.toPrecision(6))));

// fn(errp) calls a C function of module m with an al_error** out-parameter; a failure (the
// value `failed` returns true for) becomes an AttnliteError with the error's message (or
// `fallback`), the error freed. Both modules (the runtime and the figure renderer) export
// al_error_message and al_error_free.
export function checked(m, fn, failed, fallback) {
  const errp = m._malloc(4);
  m.HEAP32[errp >> 2] = 0;
  try {
    const v = fn(errp);
    if (!failed(v)) return v;
    const e = m.HEAP32[errp >> 2];
    const msg = e ? m.UTF8ToString(m._al_error_message(e)) : '';
    m._al_error_free(e);
    throw new AttnliteError(msg || fallback);
  } finally {
    m._free(errp);
  }
}
