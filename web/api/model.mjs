// attnlite JS API: Model, a loaded model (al_model) and the page's translator on it.
import { AttnliteError, MAX_STEPS, MAX_BEAM, MAX_ALPHA, MAX_INPUT_BYTES, typeName, text, texts, optionsOf, g, words,
  batchSize, sizeOption, refusedError } from './checks.mjs';
import { Generator } from './generator.mjs';
import { Classifier } from './classifier.mjs';

// A model (al_model) and the page's translator on it (al_translator; its limits: checks.mjs).
// options (al.loadModel's): maxBatch, the sentences translateBatch decodes together (1 to
// 4096, default 1: the translator's buffers grow with it); maxBeam, the widest beam (1 to
// the default, model.maxBeam: fewer hypotheses, smaller buffers).
export class Model {
  constructor(al, handle, options = {}) {
    this.al = al;
    this.h = handle;
    const m = al.mod;
    // The family (its name: 'transformer', 'bahdanau', 'lm', 'vit'), what it does ('translate';
    // 'generate': no translator, see Generator below; 'classify': see Classifier below), one
    // line about it, and its attention maps: selfAttention (encoder and decoder self-attention
    // besides cross), layered (maps per layer and head with their numbers).
    this.kind = m.UTF8ToString(m._al_model_kind_name(handle));
    this.task = ['translate', 'generate', 'classify'][m._al_model_task(handle)];
    this.description = m.UTF8ToString(m._al_model_description(handle));
    this.selfAttention = !!m._al_model_self_attention(handle);
    this.layered = !!m._al_model_layered_attention(handle);
    this.numLayers = m._al_model_num_layers(handle);
    this.layers = this.layered ? this.numLayers : 0;  // 0: one map (Bahdanau)
    this.heads = this.numHeads = m._al_model_num_heads(handle);
    this.numSteps = m._al_model_num_steps(handle);
    this.numHiddens = m._al_model_num_hiddens(handle);
    this.maxTargetSteps = m._al_model_max_target_steps(handle);
    this.srcVocabSize = m._al_model_src_vocab_size(handle);
    this.tgtVocabSize = m._al_model_tgt_vocab_size(handle);
    this.weightBytes = m._al_model_weight_bytes(handle) >>> 0;
    this.isInt8 = !!m._al_model_is_int8(handle);
    // A sub-word translator (al_model_is_subword: a byte-pair merge table in the file): it reads
    // the English as written (cased) in pieces, '_' ending a word, and result.text is the
    // detokenized French; false: the book's lowercased words.
    this.subword = !!m._al_model_is_subword(handle);
    this.tr = this.opts = 0;
    if (this.task !== 'translate') {  // model.newGenerator(), model.newClassifier()
      const what = this.task === 'classify' ? 'a Vision Transformer' : 'a language model';
      if (options.maxBeam != null)
        throw new AttnliteError(`loadModel: maxBeam is a translator's limit; this is ${what}`);
      if (this.task === 'generate' && options.maxBatch != null)
        throw new AttnliteError(`loadModel: maxBatch is a translator's or a classifier's limit; this is ${what}`);
      this.maxSteps = 0;
      this.maxBeam = 0;
      // A Vision Transformer: the images a Classifier on it takes at a time unless told otherwise.
      this.maxBatch = this.task === 'classify' ? batchSize(options, 'loadModel') : 0;
      this.workspaceBytes = 0;
      return;
    }
    // The translator's limits: up to 64 steps, beams up to 8 (fewer for target vocabularies
    // under 16 tokens: the Translator needs two target tokens per hypothesis) or options.maxBeam,
    // options.maxBatch sentences at a time (translateBatch).
    this.maxSteps = Math.min(this.maxTargetSteps, Math.max(this.numSteps, MAX_STEPS));
    const widest = Math.max(1, Math.min(MAX_BEAM, this.tgtVocabSize >> 1));
    this.maxBeam = sizeOption(options, 'maxBeam', widest, widest, 'loadModel');
    this.maxBatch = batchSize(options, 'loadModel');
    const lim = m._malloc(24);  // al_limits: max_batch, max_beam, max_tgt_steps, max_input_bytes, device, precision
    try {
      m.HEAP32.set([this.maxBatch, this.maxBeam, this.maxSteps, MAX_INPUT_BYTES, 0, 0], lim >> 2);
      this.tr = al._check((e) => m._al_translator_new(handle, lim, e), (v) => !v, 'cannot make a translator');
    } finally {
      m._free(lim);
    }
    this.workspaceBytes = m._al_translator_workspace_bytes(this.tr) >>> 0;  // the Translator's buffers
    this.opts = m._malloc(20);  // al_decode_options, rewritten by every translate()
  }

  _live() {
    if (!this.h) throw new AttnliteError('the model was freed');
    return this.h;
  }

  // A metadata value of the file ('' when absent): attnlite.config, attnlite.license ...
  metadata(key) {
    const h = this._live(), m = this.al.mod;
    if (typeof key !== 'string') throw new TypeError(`metadata: the key must be a string, got ${typeName(key)}`);
    return this.al._withStrings([key], (p) => {
      const v = m._al_model_metadata(h, p);
      return v ? m.UTF8ToString(v) : '';
    });
  }

  // The source tokens this model reads from a sentence (al_model_tokenize), not truncated to
  // numSteps: a sub-word model's pieces ("Where is the station?" -> ['Wh', 'ere_', 'is_',
  // 'the_', 'st', 'at', 'i', 'on_', '?_']; a character never seen in training is '<unk>'),
  // otherwise the words of the book's preprocessing (as al.tokenize: "He's calm!" -> ["he's",
  // 'calm', '!']).
  tokenize(sentence) {
    const h = this._live(), al = this.al, m = al.mod;
    return words(al._withStrings([text(al, sentence, 'tokenize')], (p) => {
      // One call: 8 bytes per byte of input hold the tokens (the most a byte becomes is a
      // '<unk>' piece, a space and an end of word: "\x01 " gives "<unk> _"); should they not fit,
      // a second call with the length the first gave.
      let cap = 8 * m.lengthBytesUTF8(sentence) + 64, out = m._malloc(cap);
      try {
        const n = al._check((e) => m._al_model_tokenize(h, p, out, cap, e), (v) => v < 0, 'cannot tokenize');
        if (n >= cap) {
          m._free(out);
          out = m._malloc((cap = n + 1));
          m._al_model_tokenize(h, p, out, cap, 0);
        }
        return m.UTF8ToString(out, n);
      } finally {
        m._free(out);
      }
    }));
  }

  // The sentences this model translates one at a time from a text, as `attnlite translate`
  // cuts it (al_model_sentences): those of al.splitSentences that read as at least one token
  // (a sentence of emoji alone is left out); when none does, the whole text, for translate()
  // to say why it refuses it. Never empty. Translate each and join the texts with a space.
  sentences(textValue) {
    const h = this._live(), al = this.al;
    return al._sentences('sentences', textValue, (p, spans, cap, e) => al.mod._al_model_sentences(h, p, spans, cap, e));
  }

  // The characters of a sentence that a sub-word model never saw in training, once each, in
  // the order they come: each occurrence is a '<unk>' piece among its tokens (srcWords; every
  // word made of characters it saw has pieces, so no word is unknown to it).
  _unknownChars(sentence, srcWords) {
    if (!this.subword || !srcWords.includes('<unk>')) return [];
    const seen = new Set();
    return Array.from(sentence).filter((c) => {
      if (seen.has(c) || /\s/u.test(c)) return false;
      seen.add(c);
      return this.tokenize(c).includes('<unk>');
    });
  }

  // Greedy translation as the book's predict_seq2seq, or beam search. options.d2lCompat:
  // the book's position-0-at-every-step decoding; options.maxSteps: 0 = the model's
  // num_steps, up to model.maxSteps; options.attention: false skips the attention weights
  // (result.attention is then null); options.beam: beam size, 1 (greedy, the default) to
  // model.maxBeam (8); options.alpha: length penalty in [0, 2] (default 0), hypotheses are
  // ranked by logp / length^alpha. result.nbest lists the hypotheses best first (one for
  // greedy); the rest of the result (text, tokens, probs, steps, eos, attention) is the
  // best one. result.scores is the same array as result.probs (its name before the C API).
  translate(sentence, options) {
    this._live();
    const m = this.al.mod;
    text(this.al, sentence, 'translate');
    const o = this._options(options, 'translate');
    const tr = this.tr;
    const status = this.al._withStrings([sentence], (p) => m._al_translate(tr, p, this.opts));
    if (status !== 0) throw new AttnliteError(m.UTF8ToString(m._al_translator_error(tr)) || 'translation failed');
    return this._result(m._al_translator_result(tr, 0), sentence, o);
  }

  // Many sentences (an array of strings), decoded model.maxBatch at a time (al.loadModel's
  // options.maxBatch; al_translate_batch) with translate()'s options; returns an array of
  // translate()'s results in the array's order, each what translate() gives for its sentence
  // alone (the same tokens; probabilities and weights to float rounding: a product of many
  // rows may sum in another order than one of a single row). An array longer than maxBatch
  // goes in chunks of like source lengths (a chunk decodes until its longest translation
  // ends). A sentence the library refuses fails the call with its index:
  // `translateBatch: sentences[3]: empty sentence`.
  translateBatch(sentences, options) {
    this._live();
    const al = this.al, m = al.mod;
    texts(al, sentences, 'translateBatch');
    const o = this._options(options, 'translateBatch');
    const n = sentences.length, B = this.maxBatch, tr = this.tr;
    const order = Array.from({ length: n }, (_, i) => i);
    // Each sentence's tokens, for the order and then its result (null: refused below, with its
    // index).
    let tokens = [];
    if (B > 1 && n > B) {
      tokens = sentences.map((s) => {
        try {
          return this.tokenize(s);
        } catch {
          return null;
        }
      });
      const length = (i) => tokens[i]?.length ?? 0;
      order.sort((a, b) => length(a) - length(b) || a - b);
    }
    const out = new Array(n);
    for (let start = 0; start < n; start += B) {
      const idx = order.slice(start, start + B);
      const status = al._withStrings(idx.map((i) => sentences[i]), (...ptrs) => {
        const list = m._malloc(4 * ptrs.length);
        try {
          m.HEAP32.set(ptrs, list >> 2);
          return m._al_translate_batch(tr, list, ptrs.length, this.opts);
        } finally {
          m._free(list);
        }
      });
      if (status !== 0) {
        const message = m.UTF8ToString(m._al_translator_error(tr)) || 'translation failed';
        // A sentence the library refused, named by its place in the chunk
        // (`sentence 1 of 8: empty sentence`): by its index in the list here.
        const at = m._al_translator_error_index(tr);
        if (at >= 0 && at < idx.length)
          throw refusedError('translateBatch', 'sentences', idx[at], message);
        throw new AttnliteError(`translateBatch: ${message}`);
      }
      idx.forEach((i, k) => { out[i] = this._result(m._al_translator_result(tr, k), sentences[i], o, tokens[i]); });
    }
    return out;
  }

  // translate()'s options, checked and written into this.opts (al_decode_options).
  _options(options, call) {
    const m = this.al.mod;
    options = optionsOf(options, call);
    if (!this.tr)
      throw new AttnliteError(this.task === 'classify'
        ? 'this is a Vision Transformer: it classifies images (model.newClassifier()), it does not translate'
        : 'this is a language model: it continues French text (model.newGenerator()), it does not translate');
    const attention = options.attention !== false;
    const beam = options.beam ?? 1, alpha = options.alpha ?? 0, maxSteps = options.maxSteps ?? 0;
    if (!Number.isInteger(beam))
      throw new AttnliteError(`beam size must be an integer in [1, ${this.maxBeam}], got ${beam}`);
    if (typeof alpha !== 'number')
      throw new AttnliteError(`length penalty alpha must be a number in [0, 2], got ${alpha}`);
    if (!(maxSteps >= 0 && maxSteps <= this.maxSteps))
      throw new AttnliteError(`max steps must be in [0, ${this.maxSteps}], got ${maxSteps}`);
    if (beam < 1 || beam > this.maxBeam)
      throw new AttnliteError(`beam size must be in [1, ${this.maxBeam}], got ${beam}`);
    if (!(alpha >= 0 && alpha <= MAX_ALPHA))  // NaN fails too
      throw new AttnliteError(`length penalty alpha must be a number in [0, 2], got ${g(alpha)}`);
    // al_decode_options: d2l_compat, max_steps (0 would be the translator's 64), attention,
    // beam_size, length_penalty.
    m.HEAP32.set([options.d2lCompat ? 1 : 0, maxSteps || this.numSteps, attention ? 1 : 0, beam],
      this.opts >> 2);
    m.HEAPF32[(this.opts >> 2) + 4] = alpha;
    return { attention, beam, alpha, d2lCompat: !!options.d2lCompat };
  }

  // A copy of result res (al_result) of sentence, translated with options o (_options);
  // srcWords: tokenize(sentence) when the caller has it.
  _result(res, sentence, o, srcWords) {
    const h = this.h, m = this.al.mod;
    const n = m._al_result_num_tokens(res), steps = m._al_result_steps(res);
    const S = m._al_result_src_size(res), ld = m._al_result_ld(res);
    const L = m._al_result_layers(res), NH = m._al_result_heads(res);
    const ids = m._al_result_tokens(res) >> 2, pr = m._al_result_probs(res) >> 2;
    const sids = m._al_result_src_ids(res) >> 2;
    const r = {
      text: m.UTF8ToString(m._al_result_text(res)),
      tokenIds: m.HEAP32.slice(ids, ids + n),
      probs: m.HEAPF32.slice(pr, pr + n),
      srcIds: m.HEAP32.slice(sids, sids + S),
      steps, eos: !!m._al_result_eos(res), srcLen: m._al_result_src_len(res),
      srcValid: m._al_result_src_valid(res), truncated: !!m._al_result_truncated(res),
      numUnknown: m._al_result_num_unknown(res), layers: L, heads: NH, S,
      model: this.kind, positions: o.d2lCompat ? 'd2l' : 'step', beam: o.beam, alpha: o.alpha,
    };
    r.scores = r.probs;
    const token = (id) => m.UTF8ToString(m._al_model_tgt_token(h, id));
    r.tokens = Array.from(r.tokenIds, token);
    r.srcTokens = Array.from(r.srcIds, (id) => m.UTF8ToString(m._al_model_src_token(h, id)));
    // The source tokens as the model splits them (tokenize(): a sub-word model's pieces, the
    // book's words otherwise; srcTokens are the same up to numSteps - 1, with <unk> for what the
    // model lacks, <eos> and padding), and what it reads as <unk>: the words its vocabulary
    // lacks (a word model; <unk> = 0), the characters never seen in training (a sub-word model:
    // unknownChars; its unknown list is empty, as the CLI's JSON).
    r.subword = this.subword;
    r.srcWords = srcWords ?? this.tokenize(sentence);
    r.unknown = this.subword ? []
      : r.srcWords.filter((w) => this.al._withStrings([w], (p) => m._al_model_src_id(h, p)) === 0);
    r.unknownChars = this._unknownChars(sentence, r.srcWords);
    r.nbest = [];
    for (let k = 0, nb = m._al_nbest_size(res); k < nb; ++k) {
      const nt = m._al_nbest_num_tokens(res, k), tp = m._al_nbest_tokens(res, k) >> 2;
      const pp = m._al_nbest_probs(res, k) >> 2;
      const tokenIds = m.HEAP32.slice(tp, tp + nt);
      r.nbest.push({
        text: m.UTF8ToString(m._al_nbest_text(res, k)),
        score: m._al_nbest_score(res, k), logp: m._al_nbest_logp(res, k),
        length: m._al_nbest_length(res, k), eos: !!m._al_nbest_eos(res, k),
        tokenIds, tokens: Array.from(tokenIds, token), probs: m.HEAPF32.slice(pp, pp + nt),
      });
    }
    if (!o.attention) {
      r.attention = null;
      return r;
    }
    // Attention: copies out of the translator's buffers (layouts of al_result_enc_self etc.).
    const F32 = m.HEAPF32;
    const enc = m._al_result_enc_self(res) >> 2, dec = m._al_result_dec_self(res) >> 2,
      cr = m._al_result_cross(res) >> 2;
    const att = { encoderSelf: [], decoderSelf: [], cross: [] };
    if (L > 0) {
      for (let l = 0; l < L; ++l) {
        const el = [], dl = [], cl = [];
        for (let hh = 0; hh < NH; ++hh) {
          const off = enc + (l * NH + hh) * S * S;
          el.push(F32.slice(off, off + S * S));
          const d = new Float32Array(steps * steps), c = new Float32Array(steps * S);
          for (let t = 0; t < steps; ++t) {
            const doff = dec + ((l * ld + t) * NH + hh) * ld;
            d.set(F32.subarray(doff, doff + steps), t * steps);
            const coff = cr + ((l * ld + t) * NH + hh) * S;
            c.set(F32.subarray(coff, coff + S), t * S);
          }
          dl.push(d);
          cl.push(c);
        }
        att.encoderSelf.push(el);
        att.decoderSelf.push(dl);
        att.cross.push(cl);
      }
    } else {
      att.cross.push([F32.slice(cr, cr + steps * S)]);  // Bahdanau: one layer, one head
    }
    r.attention = att;
    return r;
  }

  // A language model's generator (al_generator_new); see Generator.
  newGenerator() {
    return new Generator(this);
  }

  // A Vision Transformer's classifier (al_classifier_new_with); see Classifier.
  newClassifier(options) {
    return new Classifier(this, options);
  }

  // The target vocabulary as an array of strings (id -> token; al_model_tgt_token), read once.
  get vocab() {
    const h = this._live(), m = this.al.mod;
    if (!this._vocab) {
      this._vocab = Array.from({ length: this.tgtVocabSize }, (_, id) => m.UTF8ToString(m._al_model_tgt_token(h, id)));
    }
    return this._vocab;
  }

  // al_translator_free + al_model_free.
  free() {
    if (!this.h) return;
    const m = this.al.mod;
    m._al_translator_free(this.tr);
    m._al_model_free(this.h);
    m._free(this.opts);
    this.h = this.tr = this.opts = 0;
  }
}
