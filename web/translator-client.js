// The page's side of the translation worker (translate-worker.js): the translator model lives
// in the worker, and every call here is a promise, so the main thread never waits on a
// translation.
//
// A new translation while one is still running cancels it: the worker is stopped where it
// stands (WebAssembly cannot be interrupted from outside, so the worker goes and a fresh one
// takes its place, from the same compiled module and the model's bytes kept here) and the
// cancelled call rejects with a CancelledError, which the page ignores. Loading a model or
// free() while a translation runs cancels it the same way.

export class CancelledError extends Error {
  constructor(message = 'cancelled by a newer request') {
    super(message);
    this.name = 'CancelledError';
  }
}

// A worker's error as the page words it: the library's AttnliteError keeps its name.
function errorOf({ name, message }) {
  const e = name === 'TypeError' ? new TypeError(message) : new Error(message);
  if (name === 'AttnliteError') e.name = name;
  return e;
}

export class TranslatorClient {
  // wasm: the compiled WebAssembly.Module of attnlite.wasm (shared with the main thread); the
  // worker creates its Attnlite with figures: false (it never draws).
  constructor(wasm) {
    this.wasm = wasm;
    this.bytes = null;    // the current model's file, for a fresh worker
    this.info = null;     // its description, as the worker gave it
    this.restarts = 0;    // workers replaced to cancel a translation
    this.running = 0;     // translations in flight
    this.nextId = 1;
    this._spawn();
  }

  _spawn() {
    this.pending = new Map();
    this.worker = new Worker(new URL('./translate-worker.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data.value);
      else p.reject(errorOf(data));
    };
    // A script that failed to load or a crash: every waiting call gets the reason.
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      this._rejectAll(new Error(`the translation worker stopped: ${e.message || 'its script could not be loaded'}`));
    };
    this.worker.postMessage({ op: 'init', wasm: this.wasm });
    if (this.bytes) this._call('load', { bytes: this.bytes }).catch(() => {});
  }

  _call(op, args = {}) {
    if (this.freed) return Promise.reject(new Error('the translator was freed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, op });
      this.worker.postMessage({ id, op, ...args });
    });
  }

  _rejectAll(err) {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(err);
  }

  // Stops a running translation (if any): its promise rejects with CancelledError.
  cancel() {
    if (this.running === 0) return false;
    this.worker.terminate();
    this._rejectAll(new CancelledError());
    this.running = 0;
    this.restarts += 1;
    this._spawn();
    return true;
  }

  // Loads a translator model from its file's bytes (Uint8Array; kept for fresh workers) and
  // resolves to its description ({kind, layers, heads, srcVocabSize, maxBeam ...}). The
  // previous model stays in use if this one fails to load.
  async load(bytes) {
    this.cancel();
    const info = await this._call('load', { bytes });
    this.bytes = bytes;
    this.info = info;
    return info;
  }

  // Model.translate in the worker; a newer call cancels this one.
  translate(sentence, options) {
    return this._translating('translate', { sentence, options });
  }

  // A text of one or more sentences: each translated alone in the worker, in order
  // ([result, ...], each with its English in .sentence); a newer call cancels this one.
  translateText(text, options) {
    return this._translating('translateText', { text, options });
  }

  async _translating(op, request) {
    this.cancel();
    const epoch = this.restarts;  // a cancel moves it on: this call is then no longer counted
    this.running += 1;
    try {
      return await this._call(op, request);
    } finally {
      if (this.restarts === epoch) this.running -= 1;
    }
  }

  // Frees the model, keeps the worker (a running translation is cancelled).
  async unload() {
    this.cancel();
    await this._call('unload');
    this.bytes = this.info = null;
  }

  // The worker's allocator: { used, size } in bytes (for the page's tests).
  heap() {
    return this._call('heap');
  }

  // Frees the model and the worker: a running translation and every later call reject with
  // "the translator was freed"; free() twice does nothing.
  free() {
    if (this.freed) return;
    this.freed = true;
    this.worker.terminate();
    this._rejectAll(new Error('the translator was freed'));
    this.running = 0;
    this.bytes = this.info = null;
  }
}
