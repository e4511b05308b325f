// The page's translation worker: holds the translator model (a Transformer or a Bahdanau
// model) and translates off the main thread, so the page never blocks, even for a beam of 8
// over a long sentence. Driven by TranslatorClient (translator-client.js); one request at a
// time, answered in order:
//   { op: 'init', wasm }                     wasm: the compiled WebAssembly.Module of the page
//                                            (the runtime only: the worker never draws, so the
//                                            figure renderer, attnlite-figures.wasm, is not loaded)
//   { id, op: 'load', bytes }                -> the model's description (kind, sizes, limits)
//   { id, op: 'translate', sentence, options } -> Model.translate's result (structured clone)
//   { id, op: 'translateText', text, options } -> [result, ...]: the text cut into sentences
//                                            as the CLI cuts it (Model.sentences; a sentence that
//                                            reads as no token, emoji alone, is left out), each
//                                            translated alone, its English in result.sentence
//   { id, op: 'unload' }                     frees the model (the worker stays)
//   { id, op: 'heap' }                       -> { used, size }: the allocator's bytes in use
// Answers: { id, ok: true, value } or { id, ok: false, name, message } (name: AttnliteError,
// TypeError or Error, so the page words it as the library does).
import { Attnlite } from './attnlite-api.mjs';

let ready = null;  // the module (Attnlite), once init has come
let model = null;  // the translator model

// A Model's description: its plain fields (kind, layers, heads, vocabulary sizes, limits ...)
// without the handles into this worker's memory.
function describe(m) {
  const { al, h, tr, opts, _vocab, ...info } = m;
  return info;
}

async function handle(msg) {
  const al = await ready;
  switch (msg.op) {
    case 'load': {
      const m = al.loadModel(msg.bytes);
      if (m.task !== 'translate') {
        m.free();
        throw new Error(`a ${m.kind} model does not translate`);
      }
      model?.free();
      model = m;
      return describe(m);
    }
    case 'translate':
      if (!model) throw new Error('no model is loaded');
      return model.translate(msg.sentence, msg.options);
    case 'translateText': {
      if (!model) throw new Error('no model is loaded');
      return model.sentences(msg.text).map((p) => ({ ...model.translate(p, msg.options), sentence: p }));
    }
    case 'unload':
      model?.free();
      model = null;
      return null;
    case 'heap':
      return { used: al.heapUsed(), size: al.heapSize };
    default:
      throw new Error(`unknown request ${msg.op}`);
  }
}

self.onmessage = async ({ data }) => {
  if (data.op === 'init') {
    ready = Attnlite.create({ wasmModule: data.wasm, figures: false });
    ready.catch(() => {});  // reported by the requests that wait for it
    return;
  }
  try {
    self.postMessage({ id: data.id, ok: true, value: await handle(data) });
  } catch (e) {
    self.postMessage({ id: data.id, ok: false, name: e?.name ?? 'Error', message: e?.message ?? String(e) });
  }
};
