// attnlite in JavaScript: a small API over the two WASM modules built by wasm/build.sh: the
// runtime (attnlite.mjs + .wasm), which exports the C API of include/attnlite/c_api.h plus the
// extras of wasm/bindings.cpp, and the figure renderer (attnlite-figures.mjs + .wasm, from
// wasm/figures_bindings.cpp), which Attnlite.create loads in parallel unless told
// { figures: false } (then renderHeatmap, renderPlot and colormap throw).
// Names follow the C API in camelCase: al_model_num_steps -> model.numSteps,
// al_result_src_valid -> result.srcValid, al_nbest_logp -> result.nbest[k].logp; docs/web.md
// has the whole table.
//
//   import { Attnlite } from './attnlite-api.mjs';
//   const al = await Attnlite.create();          // loads ./attnlite.{mjs,wasm} + ./attnlite-figures.{mjs,wasm}
//   const m = al.loadModel(bytes);                // Uint8Array of a .safetensors file
//   const r = m.translate("i'm home .", { d2lCompat: false });
//   r.text, r.tokens, r.probs (= r.scores), r.srcTokens, r.attention.encoderSelf[l][h] ...
//   (Transformer: encoderSelf[l][h] S x S, decoderSelf[l][h] steps x steps, cross[l][h]
//   steps x S, row-major Float32Arrays; Bahdanau: cross[0][0] only)
//   const b = m.translate("i'm home .", { beam: 4, alpha: 0.75 });   // beam search
//   b.nbest: [{ text, score, logp, length, eos, tokenIds, tokens }, ...] best first
//   (b.text, b.tokens, b.probs and b.attention are those of b.nbest[0])
//   const list = al.loadModel(bytes, { maxBatch: 8 }).translateBatch(['go .', "i'm home ."]);
//   (translate()'s results, decoded maxBatch sentences at a time; Classifier.classifyBatch
//   for images)
//   const img = al.renderHeatmap(r.attention.cross[0][0], { queries: r.steps, keys: r.S });
//   m.free();
//
// Every array handed back is a copy: WASM memory is reused by the next call. Errors are
// thrown as AttnliteError with the library's message; an argument of the wrong type (a
// number, null, an object where a string is expected) as a TypeError naming it. A text input
// over 4096 bytes of UTF-8 is refused before it is copied into WASM memory. Every method of
// a Model, Generator or Classifier after its free() throws "the model was freed" (generator,
// classifier); free() twice does nothing.
//
// The classes live in api/ (checks.mjs: errors and argument checks; core.mjs: Attnlite;
// figures.mjs: the renderer module and HeatmapLayout; model.mjs: Model; generator.mjs:
// Generator; classifier.mjs: Classifier).

export { AttnliteError } from './api/checks.mjs';
export { Attnlite, HeatmapLayout } from './api/core.mjs';
export { Model } from './api/model.mjs';
export { Generator } from './api/generator.mjs';
export { Classifier } from './api/classifier.mjs';
import { Attnlite } from './api/core.mjs';
export default Attnlite;
