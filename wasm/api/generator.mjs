// attnlite JS API: Generator, a language model's session (al_generator_*).
import { AttnliteError, typeName, text, optionsOf, g } from './checks.mjs';

// A Generator continues French text with a model of kind 'lm' (al_generator_*; the rules,
// the sampling formula and the perplexity formula are in include/attnlite/generate.h).
//
//   const lm = al.loadModel(bytes);                  // models/lm-fra.safetensors: lm.kind 'lm'
//   const g = new Generator(lm);                      // or lm.newGenerator(); al_generator_new
//   g.generate('je').text                             // 'je ne suis pas en train de pleurer .'
//   g.start('nous allons', { sample: true, temperature: 0.8, topK: 40, seed: 3 });
//   while (!g.done) g.step();                         // one token per call
//   g.continuation, g.tokens, g.probs, g.attention    // the generation so far
//   g.score('je suis là .')                           // { nll, tokens, scored, perplexity }
//   g.free();
//
// Options (all optional): maxTokens (integer >= 0; 0, the default: until <eos> or the
// context is full), sample (false: greedy; it defaults to true when any of temperature,
// topK, topP or seed is given), temperature (> 0, default 1), topK (integer >= 0; 0, the
// default: no cut), topP (in (0, 1], default 1: no cut), seed (the SplitMix64 seed, a uint64:
// a Number that is an integer in [0, 2^53 - 1] or a BigInt in [0, 2^64 - 1]; default 0),
// attention (default true: record the causal attention weights).
//
// Getters read the generation so far from WASM memory and copy it (tokenIds, probs,
// attention ...); the generation stays in the C side until the next start/step/generate/
// score. attentionView() is the one exception: a view of the module's memory, valid only
// until the next call (and any memory growth).
const U64_MAX = (1n << 64n) - 1n;
const OPTS_BYTES = 40;  // sizeof(al_generate_options) in wasm32 (static_assert in bindings.cpp)

// The seed as a BigInt in [0, 2^64 - 1], or an AttnliteError.
function seedOf(seed) {
  const bad = () => new AttnliteError('seed must be an integer in [0, 2^64 - 1] (a Number up to 2^53 - 1 or a BigInt), ' +
    `got ${typeof seed === 'bigint' ? `${seed}n` : typeof seed === 'string' ? JSON.stringify(seed) : String(seed)}`);
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed > U64_MAX) throw bad();
    return seed;
  }
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) throw bad();
  return BigInt(seed);
}

export class Generator {
  // al_generator_new(model, AL_DEVICE_CPU, &err); a model that is not a language model is the
  // library's error.
  constructor(model) {
    const al = model.al, m = al.mod;
    const mh = model._live();
    this.al = al;
    this.model = model;
    this.h = al._check((e) => m._al_generator_new(mh, 0, e), (v) => !v, 'cannot make a generator');
    this.vocab = model.vocab;                                        // id -> token
    this.unkId = this.vocab.indexOf('<unk>');
    this.context = m._al_generator_context(this.h);                  // positions the model reads
    this.workspaceBytes = m._al_generator_workspace_bytes(this.h) >>> 0;
    this.opts = m._malloc(OPTS_BYTES);  // al_generate_options, rewritten by every start()
    this.prompt = '';
    this.options = null;
  }

  _live() {
    if (!this.h) throw new AttnliteError('the generator was freed');
    return this.h;
  }

  // Checks options and writes them into this.opts (al_generate_options); returns the options
  // as used. The messages name the option and its range.
  _writeOptions(o, call) {
    o = optionsOf(o, call);
    const given = (k) => o[k] !== undefined && o[k] !== null;
    const sample = given('sample') ? !!o.sample : ['temperature', 'topK', 'topP', 'seed'].some(given);
    const maxTokens = given('maxTokens') ? o.maxTokens : 0;
    const temperature = given('temperature') ? o.temperature : 1;
    const topK = given('topK') ? o.topK : 0;
    const topP = given('topP') ? o.topP : 1;
    if (!Number.isInteger(maxTokens) || maxTokens < 0)
      throw new AttnliteError(`max tokens must be an integer >= 0 (0: until <eos> or the context is full), got ${maxTokens}`);
    if (typeof temperature !== 'number' || !(temperature > 0) || !Number.isFinite(temperature))
      throw new AttnliteError(`temperature must be a number > 0, got ${typeof temperature === 'number' ? g(temperature) : temperature}`);
    if (!Number.isInteger(topK) || topK < 0)
      throw new AttnliteError(`top-k must be an integer >= 0 (0: no cut), got ${topK}`);
    if (typeof topP !== 'number' || !(topP > 0 && topP <= 1))
      throw new AttnliteError(`top-p must be a number in (0, 1], got ${typeof topP === 'number' ? g(topP) : topP}`);
    const seed = seedOf(given('seed') ? o.seed : 0);
    const attention = o.attention !== false;
    const m = this.al.mod, p = this.opts >> 2;
    // max_tokens, sample, temperature, top_k, top_p, (padding), seed (uint64 at byte 24), attention
    m.HEAP32[p] = Math.min(maxTokens, 0x7fffffff);
    m.HEAP32[p + 1] = sample ? 1 : 0;
    m.HEAPF32[p + 2] = temperature;
    m.HEAP32[p + 3] = Math.min(topK, 0x7fffffff);
    m.HEAPF32[p + 4] = topP;
    m.HEAP32[p + 5] = 0;
    m.HEAPU32[p + 6] = Number(seed & 0xffffffffn);
    m.HEAPU32[p + 7] = Number(seed >> 32n);
    m.HEAP32[p + 8] = attention ? 1 : 0;
    m.HEAP32[p + 9] = 0;
    return { maxTokens, sample, temperature, topK, topP, seed, attention };
  }

  _call(fn) {  // a C call returning al_status; a failure throws al_generator_error's message
    const status = fn();
    if (status !== 0) throw new AttnliteError(this.al.mod.UTF8ToString(this.al.mod._al_generator_error(this.h)) || 'generation failed');
    return this;
  }

  // Reads the prompt and chooses the first token (al_generator_start). Returns this.
  start(prompt, options) {
    const h = this._live(), m = this.al.mod;
    text(this.al, prompt, 'start', 'prompt');
    const used = this._writeOptions(options, 'start');
    this.prompt = '';
    this.options = null;
    this._call(() => this.al._withStrings([prompt], (p) => m._al_generator_start(h, p, this.opts)));
    this.prompt = prompt;
    this.options = used;
    return this;
  }

  // Feeds the last token back and chooses the next one (al_generator_step); nothing happens
  // once done. Returns this.
  step() {
    const h = this._live();
    return this._call(() => this.al.mod._al_generator_step(h));
  }

  // The whole generation (al_generate): start, then step until done. Returns this.
  generate(prompt, options) {
    const h = this._live(), m = this.al.mod;
    text(this.al, prompt, 'generate', 'prompt');
    const used = this._writeOptions(options, 'generate');
    this.prompt = '';
    this.options = null;
    this._call(() => this.al._withStrings([prompt], (p) => m._al_generate(h, p, this.opts)));
    this.prompt = prompt;
    this.options = used;
    return this;
  }

  // -log p of one sentence under the model (al_generator_score): { nll, tokens, scored,
  // perplexity = exp(nll / tokens) }; scored false (perplexity NaN) for a sentence that is
  // empty or longer than context - 1 words. It ends the current generation.
  score(sentence) {
    const h = this._live(), m = this.al.mod;
    text(this.al, sentence, 'score');
    const p = m._malloc(16);  // double nll, long tokens (4 bytes in wasm32), int scored
    try {
      m.HEAPF64[p >> 3] = 0;
      m.HEAP32[(p >> 2) + 2] = 0;
      m.HEAP32[(p >> 2) + 3] = 0;
      this.prompt = '';
      this.options = null;
      this._call(() => this.al._withStrings([sentence], (s) => m._al_generator_score(h, s, p, p + 8, p + 12)));
      const nll = m.HEAPF64[p >> 3], tokens = m.HEAP32[(p >> 2) + 2], scored = m.HEAP32[(p >> 2) + 3] === 1;
      return { nll, tokens, scored, perplexity: scored && tokens ? Math.exp(nll / tokens) : NaN };
    } finally {
      m._free(p);
    }
  }

  // The perplexity of several sentences together: exp(summed nll / summed tokens), with the
  // counts of sentences scored and skipped.
  perplexity(sentences) {
    this._live();
    if (!Array.isArray(sentences))
      throw new TypeError(`perplexity: sentences must be an array of strings, got ${typeName(sentences)}`);
    let nll = 0, tokens = 0, scored = 0, skipped = 0;
    for (const s of sentences) {
      const r = this.score(s);
      nll += r.nll;
      tokens += r.tokens;
      if (r.scored) ++scored;
      else ++skipped;
    }
    return { perplexity: tokens ? Math.exp(nll / tokens) : NaN, nll, tokens, sentences: scored, skipped };
  }

  // ---- the generation so far (al_generation_*): 0, '', empty arrays before any ----
  get text() { return this.al.mod.UTF8ToString(this.al.mod._al_generation_text(this._live())); }
  get continuation() { return this.al.mod.UTF8ToString(this.al.mod._al_generation_continuation(this._live())); }
  get numTokens() { return this.al.mod._al_generation_num_tokens(this._live()); }
  get numPrompt() { return this.al.mod._al_generation_num_prompt(this._live()); }
  get numGenerated() { return this.al.mod._al_generation_num_generated(this._live()); }
  get numUnknown() { return this.al.mod._al_generation_num_unknown(this._live()); }
  get eos() { return !!this.al.mod._al_generation_eos(this._live()); }
  get done() { return !!this.al.mod._al_generation_done(this._live()); }
  get layers() { return this.al.mod._al_generation_layers(this._live()); }
  get heads() { return this.al.mod._al_generation_heads(this._live()); }
  get ld() { return this.al.mod._al_generation_ld(this._live()); }
  // Positions the model has read: <bos>, the prompt and the tokens fed back (the last token
  // chosen is read at the next step, so it has no row yet).
  get positions() { return this.al.mod._al_generation_positions(this._live()); }
  // Ids of <bos>, the prompt words and the generated tokens (with <eos> when it came).
  get tokenIds() {
    const m = this.al.mod, n = m._al_generation_num_tokens(this._live()), p = m._al_generation_tokens(this.h) >> 2;
    return n && p ? m.HEAP32.slice(p, p + n) : new Int32Array(0);
  }
  get tokens() { return Array.from(this.tokenIds, (id) => this.vocab[id] ?? ''); }
  // softmax probability (temperature 1, before any cut) of each generated token.
  get probs() {
    const m = this.al.mod, n = m._al_generation_num_generated(this._live()), p = m._al_generation_probs(this.h) >> 2;
    return n && p ? m.HEAPF32.slice(p, p + n) : new Float32Array(0);
  }
  // The prompt words the vocabulary lacks (read as <unk>), as preprocessed.
  get unknown() {
    if (!this.numUnknown) return [];
    const ids = this.tokenIds;
    return this.al.tokenize(this.prompt).filter((w, i) => ids[1 + i] === this.unkId);
  }

  // The causal self-attention weights (L, NH, ld, ld), row-major [l][h][q][k]: query position
  // q attends to key position k <= q (0 above the diagonal); rows q < positions hold data.
  // A copy (null when not recorded).
  get attention() {
    const v = this.attentionView();
    return v ? v.slice() : null;
  }

  // The same as a Float32Array view of WASM memory: no copy, valid until the next call.
  attentionView() {
    const m = this.al.mod, a = m._al_generation_attention(this._live()) >> 2;
    if (!a) return null;
    const L = m._al_generation_layers(this.h), NH = m._al_generation_heads(this.h), ld = m._al_generation_ld(this.h);
    return m.HEAPF32.subarray(a, a + L * NH * ld * ld);
  }

  // Layer l, head h as a positions x positions copy (row-major), or null when not recorded.
  attentionAt(l, h) {
    const v = this.attentionView();
    if (!v) return null;
    const L = this.layers, NH = this.heads, ld = this.ld, P = this.positions;
    if (!(Number.isInteger(l) && l >= 0 && l < L && Number.isInteger(h) && h >= 0 && h < NH))
      throw new AttnliteError(`attention: layer must be in [0, ${L - 1}] and head in [0, ${NH - 1}], got ${l}, ${h}`);
    const out = new Float32Array(P * P), base = (l * NH + h) * ld * ld;
    for (let q = 0; q < P; ++q) out.set(v.subarray(base + q * ld, base + q * ld + P), q * P);
    return out;
  }

  // Everything above at once, copied: what the generation is now.
  result() {
    const att = this.attention;
    return {
      prompt: this.prompt, text: this.text, continuation: this.continuation, tokens: this.tokens,
      tokenIds: this.tokenIds, probs: this.probs, numTokens: this.numTokens, numPrompt: this.numPrompt,
      numGenerated: this.numGenerated, numUnknown: this.numUnknown, unknown: this.unknown, eos: this.eos,
      done: this.done, layers: this.layers, heads: this.heads, ld: this.ld, positions: this.positions,
      attention: att, options: this.options ? { ...this.options } : null,
    };
  }

  // al_generator_free (the model may be freed before or after).
  free() {
    if (!this.h) return;
    this.al.mod._al_generator_free(this.h);
    this.al.mod._free(this.opts);
    this.h = this.opts = 0;
  }
}
