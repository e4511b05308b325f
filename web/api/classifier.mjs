// attnlite JS API: Classifier, a Vision Transformer's session (al_classifier_*).
import { AttnliteError, batchSize, flag, listError, optionsOf, refusedError, typeName } from './checks.mjs';

// A Classifier labels images with a model of kind 'vit' (al_classifier_*, al_classification_*;
// include/attnlite/classify.h): one image at a time, or a list maxBatch at a time.
//
//   const vit = al.loadModel(bytes);                   // models/vit-digits.safetensors: 'vit'
//   const c = new Classifier(vit);                     // or vit.newClassifier()
//   const x = al.digitFromRgba(ctx.getImageData(0, 0, w, h));   // 8x8 in 0..16
//   const r = c.classify(x);                           // { label, name, prob, probs, ... }
//   c.attention(l)                                     // Float32Array (NH, T, T), [h][q][k]
//   c.rollout()                                        // Float32Array (T, T): row 0 is CLS's
//   const many = new Classifier(vit, { maxBatch: 64 });
//   many.classifyBatch([x, y, z])                      // [{ label, ... }, ...]
//   c.free();
//
// Tokens: T = patches + 1, CLS first, then the patches row-major. The classification lives in
// the C classifier until the next classify(); attention() and rollout() read it and copy.
export class Classifier {
  // options.maxBatch: the images classifyBatch classifies in one pass of the model (1 to
  // 4096; default: al.loadModel's maxBatch, else 1), al_classifier_limits.max_batch.
  constructor(model, options) {
    const al = model.al, m = al.mod;
    const mh = model._live();
    options = optionsOf(options, 'Classifier');
    this.maxBatch = batchSize(options, 'Classifier', model.maxBatch || 1);
    this.al = al;
    this.model = model;
    const lim = m._malloc(12);  // al_classifier_limits: max_batch, device, precision
    try {
      m.HEAP32.set([this.maxBatch, 0, 0], lim >> 2);
      this.h = al._check((e) => m._al_classifier_new_with(mh, lim, e), (v) => !v, 'cannot make a classifier');
    } finally {
      m._free(lim);
    }
    this.imageSize = m._al_classifier_image_size(this.h);   // S: images are C x S x S
    this.channels = m._al_classifier_channels(this.h);
    this.numClasses = m._al_classifier_num_classes(this.h);
    this.tokens = m._al_classifier_tokens(this.h);          // T = patches + 1
    this.labels = Array.from({ length: this.numClasses }, (_, k) => m.UTF8ToString(m._al_classifier_label(this.h, k)));
    this.inputSize = this.channels * this.imageSize * this.imageSize;
    this.image = m._malloc(this.maxBatch * this.inputSize * 4);
    if (!this.image) {
      m._al_classifier_free(this.h);
      this.h = 0;
      throw new AttnliteError(`cannot make a classifier: no memory for ${this.maxBatch} images`);
    }
    this.batched = false;  // the last call was classifyBatch: result(), attention(), rollout() refuse
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
    this._pixels(image, 'classify');
    m.HEAPF32.set(image, this.image >> 2);
    this.batched = false;
    if (m._al_classify(h, this.image, options.attention === false ? 0 : 1) !== 0) throw this._error('classification failed');
    return this.result();
  }

  // Many images (an array of classify()'s images), classified maxBatch at a time in one pass
  // of the model each (al_classify_batch); returns an array of classify()'s results in the
  // array's order, each what classify() gives for its image alone to float rounding (a
  // product of many rows may sum in another order than one of a single row). With
  // options.attention (default false) each result also holds its attention, an array of the
  // layers' weights (NH, T, T), and its rollout (T, T). An image the library refuses fails
  // the call with its index: `classifyBatch: images[70]: pixel 3 is not a finite number`.
  // Afterwards result(), attention() and rollout() refuse (they read one image's
  // classification): the results carry what they would.
  classifyBatch(images, options) {
    const h = this._live(), m = this.al.mod;
    options = optionsOf(options, 'classifyBatch');
    if (!Array.isArray(images))
      throw new TypeError(`classifyBatch: images must be an array of images, got ${typeName(images)}`);
    for (let i = 0; i < images.length; ++i) {  // a hole in the array is undefined
      try {
        this._pixels(images[i], 'classifyBatch');
      } catch (e) {
        throw listError('classifyBatch', 'images', i, e.message.replace(/^classifyBatch:? /, ''));
      }
    }
    const attention = flag(options, 'attention', false, 'classifyBatch'), n = images.length, B = this.maxBatch;
    const T = this.tokens, out = [];
    if (n > 0) this.batched = true;
    for (let start = 0; start < n; start += B) {
      const count = Math.min(B, n - start);
      for (let k = 0; k < count; ++k) m.HEAPF32.set(images[start + k], (this.image >> 2) + k * this.inputSize);
      if (m._al_classify_batch(h, this.image, count, attention ? 1 : 0) !== 0) {
        const message = m.UTF8ToString(m._al_classifier_error(h)) || 'classification failed';
        const at = m._al_classifier_error_index(h);  // the image refused, counted within the chunk
        if (at >= 0 && at < count)
          throw refusedError('classifyBatch', 'images', start + at, message);
        throw new AttnliteError(`classifyBatch: ${message}`);
      }
      for (let k = 0; k < count; ++k) {
        const r = this._resultAt(h, k);
        if (attention) {
          r.attention = Array.from({ length: r.layers }, (_, l) => {
            const a = m._al_classification_attention_at(h, k, l) >> 2;
            return m.HEAPF32.slice(a, a + r.heads * T * T);
          });
          r.rollout = this._rollout((o) => m._al_classification_rollout_at(h, k, o));
        }
        out.push(r);
      }
    }
    return out;
  }

  // Checks an image: C x S x S numbers, an array or a typed array.
  _pixels(image, call) {
    if (!image || typeof image !== 'object' || typeof image.length !== 'number')
      throw new AttnliteError(`${call} needs ${this.inputSize} pixel values (an array or Float32Array)`);
    if (image.length !== this.inputSize)
      throw new AttnliteError(`${call}: ${image.length} pixel values, the model reads ${this.channels} x ${this.imageSize} x ${this.imageSize} = ${this.inputSize}`);
  }

  _single(call) {
    const h = this._live();
    if (this.batched)
      throw new AttnliteError(`${call}: the last call was classifyBatch; its results hold each image's label, probabilities and (attention: true) weights`);
    return h;
  }

  // The last classification (null before any or after a failure).
  result() {
    const h = this._single('result');
    return this.al.mod._al_classification_label(h) < 0 ? null : this._resultAt(h, 0);
  }

  // Image k of the last call: { label, name, prob, probs (a copy), layers, heads, tokens }.
  _resultAt(h, k) {
    const m = this.al.mod, label = m._al_classification_label_at(h, k), p = m._al_classification_probs_at(h, k) >> 2;
    return {
      label, name: this.labels[label] ?? String(label), prob: m._al_classification_prob_at(h, k),
      probs: m.HEAPF32.slice(p, p + this.numClasses),
      layers: m._al_classification_layers(h), heads: m._al_classification_heads(h), tokens: this.tokens,
    };
  }

  get layers() { return this.al.mod._al_classification_layers(this._live()); }
  get heads() { return this.al.mod._al_classification_heads(this._live()); }

  // Layer l's attention weights (NH, T, T), [h][q][k], a copy; null when the last
  // classification did not record them.
  attention(layer) {
    const h = this._single('attention'), m = this.al.mod, L = m._al_classification_layers(h);
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
    const h = this._single('rollout');
    return this._rollout((out) => this.al.mod._al_classification_rollout(h, out));
  }

  // fn(out) writes a rollout (T x T) into out: a copy of it.
  _rollout(fn) {
    const m = this.al.mod, T = this.tokens;
    const out = m._malloc(T * T * 4);
    try {
      if (fn(out) !== 0) throw this._error('rollout failed');
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
