// attnlite JS API: Classifier, a Vision Transformer's session (al_classifier_*).
import { AttnliteError, optionsOf } from './checks.mjs';

// A Classifier labels images with a model of kind 'vit' (al_classifier_*, al_classification_*;
// include/attnlite/classify.h), one image at a time.
//
//   const vit = al.loadModel(bytes);                   // models/vit-digits.safetensors: 'vit'
//   const c = new Classifier(vit);                     // or vit.newClassifier()
//   const x = al.digitFromRgba(ctx.getImageData(0, 0, w, h));   // 8x8 in 0..16
//   const r = c.classify(x);                           // { label, name, prob, probs, ... }
//   c.attention(l)                                     // Float32Array (NH, T, T), [h][q][k]
//   c.rollout()                                        // Float32Array (T, T): row 0 is CLS's
//   c.free();
//
// Tokens: T = patches + 1, CLS first, then the patches row-major. The classification lives in
// the C classifier until the next classify(); attention() and rollout() read it and copy.
export class Classifier {
  constructor(model) {
    const al = model.al, m = al.mod;
    const mh = model._live();
    this.al = al;
    this.model = model;
    this.h = al._check((e) => m._al_classifier_new(mh, 0, e), (v) => !v, 'cannot make a classifier');
    this.imageSize = m._al_classifier_image_size(this.h);   // S: images are C x S x S
    this.channels = m._al_classifier_channels(this.h);
    this.numClasses = m._al_classifier_num_classes(this.h);
    this.tokens = m._al_classifier_tokens(this.h);          // T = patches + 1
    this.labels = Array.from({ length: this.numClasses }, (_, k) => m.UTF8ToString(m._al_classifier_label(this.h, k)));
    this.inputSize = this.channels * this.imageSize * this.imageSize;
    this.image = m._malloc(this.inputSize * 4);
  }

  _live() {
    if (!this.h) throw new AttnliteError('the classifier was freed');
    return this.h;
  }

  _error(fallback) {
    return new AttnliteError(this.al.mod.UTF8ToString(this.al.mod._al_classifier_error(this.h)) || fallback);
  }

  // image: C x S x S numbers (the model's pixel values: 0..16 for the digits); options.attention
  // (default true) records the attention weights for attention() and rollout().
  // Returns { label, name, prob, probs (Float32Array numClasses), layers, heads, tokens }.
  classify(image, options) {
    const h = this._live(), m = this.al.mod;
    options = optionsOf(options, 'classify');
    if (!image || typeof image.length !== 'number')
      throw new AttnliteError(`classify needs ${this.inputSize} pixel values (an array or Float32Array)`);
    if (image.length !== this.inputSize)
      throw new AttnliteError(`classify: ${image.length} pixel values, the model reads ${this.channels} x ${this.imageSize} x ${this.imageSize} = ${this.inputSize}`);
    m.HEAPF32.set(image, this.image >> 2);
    if (m._al_classify(h, this.image, options.attention === false ? 0 : 1) !== 0) throw this._error('classification failed');
    return this.result();
  }

  // The last classification (null before any or after a failure).
  result() {
    const h = this._live(), m = this.al.mod;
    const label = m._al_classification_label(h);
    if (label < 0) return null;
    const p = m._al_classification_probs(h) >> 2;
    return {
      label, name: this.labels[label] ?? String(label), prob: m._al_classification_prob(h),
      probs: m.HEAPF32.slice(p, p + this.numClasses),
      layers: m._al_classification_layers(h), heads: m._al_classification_heads(h), tokens: this.tokens,
    };
  }

  get layers() { return this.al.mod._al_classification_layers(this._live()); }
  get heads() { return this.al.mod._al_classification_heads(this._live()); }

  // Layer l's attention weights (NH, T, T), [h][q][k], a copy; null when the last
  // classification did not record them.
  attention(layer) {
    const h = this._live(), m = this.al.mod, L = m._al_classification_layers(h);
    if (L === 0)
      throw new AttnliteError('attention: there is no classification to read (none yet, or the last one failed)');
    if (!(Number.isInteger(layer) && layer >= 0 && layer < L))
      throw new AttnliteError(`attention: layer must be an integer in [0, ${L - 1}], got ${layer}`);
    const a = m._al_classification_attention(h, layer) >> 2;
    if (!a) return null;
    const T = this.tokens, n = m._al_classification_heads(h) * T * T;
    return m.HEAPF32.slice(a, a + n);
  }

  // The attention rollout (T, T) of the last classification (classify.h: the heads' mean per
  // layer, plus the identity, rows normalised, multiplied through the layers); row 0 is the
  // CLS token's attention over CLS and the patches.
  rollout() {
    const h = this._live(), m = this.al.mod, T = this.tokens;
    const out = m._malloc(T * T * 4);
    try {
      if (m._al_classification_rollout(h, out) !== 0) throw this._error('rollout failed');
      return m.HEAPF32.slice(out >> 2, (out >> 2) + T * T);
    } finally {
      m._free(out);
    }
  }

  // al_classifier_free (the model may be freed before or after).
  free() {
    if (!this.h) return;
    this.al.mod._al_classifier_free(this.h);
    this.al.mod._free(this.image);
    this.h = this.image = 0;
  }
}
