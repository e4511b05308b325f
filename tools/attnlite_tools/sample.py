"""The reference of attnlite's text generation with a language model (kind "lm"): the
token choice (greedy or seeded sampling), the generation loop and the perplexity formula.
attnlite/generate.h implements exactly these rules; tests/fixtures/lm_fra_samples.json and
lm_fra_ppl.json pin them on the shipped model.

Choosing the next token from the float32 logits z (V) of the last position:

  - greedy: the largest logit, the lowest id on ties;
  - sampling: p = softmax(z / temperature) in float64 (z converted to float64 before the
    division). Candidates are every token sorted by p descending, ties to the lower id.
    With top_k > 0 only the first top_k stay. With top_p < 1 only the shortest prefix
    whose running (float64) sum of p reaches top_p stays (at least one; all of them when
    no prefix reaches it). p is not renormalised after either cut. Then
    u = uniform() * (sum of the kept p, summed in candidate order), and the choice is the
    first kept candidate whose running sum of p exceeds u (the last kept one if rounding
    leaves none). One uniform() per sampled token.
  - uniform() = (next() >> 11) * 2**-53 from SplitMix64 seeded with `seed`.

temperature and top_p are options of type float in attnlite (GenerateOptions), so the
reference rounds them to float32 first: temperature 0.7 divides by 0.699999988079071.

Generation: the prompt is preprocessed with the book's preprocess_nmt, split on single
spaces, each word looked up in the file's vocabulary (<unk> = 0 when absent) and <bos>
put in front. The model reads the whole sequence (one causal pass) and the next token is
chosen from the last position's logits; it is appended, and generation stops at <eos>
(which is kept in the token list), after max_tokens new tokens (0: no limit), or once the
sequence holds context + 1 tokens, context being the config's max_len (so the model never
reads more than max_len positions).

Perplexity: each non-empty sentence of at most max_len - 1 words becomes
<bos> w1 .. wn <eos>; the model reads <bos> w1 .. wn and predicts w1 .. wn <eos>. NLL is the
sum of -log_softmax(z)[token] (float64) over every predicted token, N the number of
predicted tokens, perplexity = exp(NLL / N). Empty lines and longer sentences are skipped
(counted).
"""
import math

import numpy as np
import torch

from . import d2l
from . import export

MASK64 = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 (Steele, Lea, Flood 2014) on Python integers, wrapping at 2**64."""

    def __init__(self, seed=0):
        self.state = int(seed) & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self):
        """A double in [0, 1) with 53 random bits."""
        return (self.next() >> 11) * 2.0 ** -53


def as_float32(x):
    """x as attnlite holds it in a float option."""
    return float(np.float32(x))


def softmax64(z, temperature=1.0):
    """float64 softmax of float32 logits z / temperature (max subtracted)."""
    x = np.asarray(z, dtype=np.float32).astype(np.float64) / float(temperature)
    e = np.exp(x - x.max())
    return e / e.sum()


def choose_greedy(z):
    """(token, margin): the argmax (lowest id on ties) and its logit minus the runner-up's."""
    z = np.asarray(z, dtype=np.float32)
    t = int(np.argmax(z))  # the first maximum: the lowest id
    rest = np.delete(z, t)
    return t, float(z[t]) - float(rest.max()) if rest.size else float("inf")


def choose_sample(z, temperature, top_k, top_p, rng):
    """(token, details) by the sampling rule, with one rng.uniform() draw.

    details: u (the uniform draw), kept (number of candidates left) and margin, how far
    the step is from choosing differently, in probability mass: the smallest of u's
    distance to the running sums around it (relative to the kept sum), the top_p cut's
    distances (the running sum at the cut minus top_p; top_p minus the sum one before it)
    and, when the choice is the last kept candidate, p of it minus p of the first dropped
    one (a swap of those two would change the choice; elsewhere it only moves u by
    uniform() times that difference, which the first distance covers)."""
    temperature, top_p = as_float32(temperature), as_float32(top_p)
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    if top_k < 0 or not 0 < top_p <= 1:
        raise ValueError("top_k >= 0 and 0 < top_p <= 1")
    p = softmax64(z, temperature)
    order = np.argsort(-p, kind="stable")  # p descending, ties to the lower id
    n = len(order)
    if top_k > 0:
        n = min(n, top_k)
    cut_margin = float("inf")
    if top_p < 1:
        run = 0.0
        for i in range(n):
            prev = run
            run += float(p[order[i]])
            if run >= top_p:
                cut_margin = run - top_p
                if i > 0:
                    cut_margin = min(cut_margin, top_p - prev)
                n = i + 1
                break
    kept = order[:n]
    total = 0.0
    for c in kept:
        total += float(p[c])
    draw = rng.uniform()
    u = draw * total
    run, pos = 0.0, n - 1
    lo, hi = total - float(p[kept[-1]]), total
    for i, c in enumerate(kept):
        prev = run
        run += float(p[c])
        if run > u:
            pos, lo, hi = i, prev, run
            break
    margin = min(cut_margin, (u - lo) / total, (hi - u) / total)
    if pos == n - 1 and n < len(order):
        margin = min(margin, float(p[kept[-1]] - p[order[n]]))
    return int(kept[pos]), dict(u=draw, kept=int(n), margin=margin)


def prompt_words(prompt):
    """The prompt as the book preprocesses and splits it."""
    return d2l.preprocess_nmt(prompt).split(' ')


class LanguageModel:
    """A loaded language model (lm.load_lm) with its file's token list."""

    def __init__(self, net, vocab, info):
        self.net, self.vocab, self.info = net, vocab, info
        self.cfg = info["config"]
        self.context = int(self.cfg["max_len"])
        # the tokens exactly as the file stores them (<empty> stays <empty>)
        self.tokens = export.vocab_tokens(vocab)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.unk, self.bos, self.eos = 0, self.index["<bos>"], self.index["<eos>"]

    @classmethod
    def load(cls, path):
        from . import lm
        return cls(*lm.load_lm(path))

    def lookup(self, words):
        return [self.index.get(w, self.unk) for w in words]

    @torch.no_grad()
    def logits(self, ids):
        """(len(ids), V) float32 logits of one causal pass (batch 1)."""
        if len(ids) > self.context:
            raise ValueError(f"{len(ids)} positions > context {self.context}")
        return self.net(torch.tensor([ids], dtype=torch.int64))[0].numpy()

    def generate(self, prompt, sample=False, temperature=1.0, top_k=0, top_p=1.0, seed=0,
                 max_tokens=0):
        """The generation record: tokens (ids with <bos>, prompt, generated and <eos> when
        it came), text, continuation, probs (softmax(z)[token] at temperature 1 of each
        generated token), eos, margins (per generated token: greedy, top-1 minus top-2
        logit; sampling, the margin of choose_sample), uniforms (sampling: each draw),
        num_prompt, num_unknown."""
        words = prompt_words(prompt)
        if words == [''] or '' in words:
            raise ValueError(f"empty word in prompt {prompt!r}")
        ids = [self.bos] + self.lookup(words)
        if len(ids) > self.context:
            raise ValueError("prompt longer than the context")
        rng = SplitMix64(seed)
        gen, probs, margins, uniforms = [], [], [], []
        eos = False
        while True:
            if max_tokens > 0 and len(gen) >= max_tokens:
                break
            if len(ids) + len(gen) >= self.context + 1:
                break
            z = self.logits(ids + gen)[-1]
            if sample:
                t, d = choose_sample(z, temperature, top_k, top_p, rng)
                margins.append(d["margin"])
                uniforms.append(d["u"])
            else:
                t, m = choose_greedy(z)
                margins.append(m)
            probs.append(float(softmax64(z)[t]))
            gen.append(t)
            if t == self.eos:
                eos = True
                break
        shown = [self.tokens[t] for t in (gen[:-1] if eos else gen)]
        rec = dict(tokens=ids + gen, text=' '.join(words + shown),
                   continuation=' '.join(shown), probs=probs, eos=eos,
                   margins=margins, num_prompt=len(words),
                   num_unknown=sum(1 for w in words if w not in self.index))
        if sample:
            rec["uniforms"] = uniforms
        return rec

    def sentence_nll(self, ids):
        """(summed -log p, predicted tokens) of one sentence's word ids."""
        x = [self.bos] + list(ids)
        y = list(ids) + [self.eos]
        z = torch.from_numpy(self.logits(x)).double()
        lp = torch.log_softmax(z, -1)
        return -float(lp[torch.arange(len(y)), torch.tensor(y)].sum()), len(y)

    def perplexity_lines(self, lines):
        """The perplexity record of raw text lines (preprocessed and split like a prompt):
        nll, tokens, sentences, skipped, perplexity, per_line ([nll, tokens] or None when
        skipped)."""
        nll, ntok, nsent, skipped, per_line = 0.0, 0, 0, 0, []
        for line in lines:
            words = prompt_words(line) if line else []
            if not words or len(words) > self.context - 1:
                skipped += 1
                per_line.append(None)
                continue
            s, n = self.sentence_nll(self.lookup(words))
            nll, ntok, nsent = nll + s, ntok + n, nsent + 1
            per_line.append([s, n])
        return dict(nll=nll, tokens=ntok, sentences=nsent, skipped=skipped,
                    perplexity=math.exp(nll / ntok) if ntok else float("nan"),
                    per_line=per_line)


def self_test():
    """SplitMix64's published first outputs for seed 0, and the choice rules on small
    hand-checked logits."""
    r = SplitMix64(0)
    got = [r.next() for _ in range(3)]
    want = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert got == want, [hex(g) for g in got]
    assert SplitMix64(0).uniform() == (0xE220A8397B1DCDAF >> 11) * 2.0 ** -53
    assert choose_greedy([1.0, 3.0, 3.0, 2.0])[0] == 1  # lowest id on ties
    z = np.log(np.array([0.1, 0.4, 0.4, 0.1], dtype=np.float32))

    class Fixed:
        def __init__(self, u):
            self.u = u

        def uniform(self):
            return self.u
    # candidates 1, 2 (tie: lower id first), 0, 3; running sums 0.4 0.8 0.9 1.0
    assert choose_sample(z, 1.0, 0, 1.0, Fixed(0.39))[0] == 1
    assert choose_sample(z, 1.0, 0, 1.0, Fixed(0.41))[0] == 2
    assert choose_sample(z, 1.0, 0, 1.0, Fixed(0.85))[0] == 0
    assert choose_sample(z, 1.0, 0, 1.0, Fixed(0.95))[0] == 3
    # top_k 1 keeps token 1 only; top_p 0.5 keeps 1 and 2 (0.4 < 0.5 <= 0.8)
    assert choose_sample(z, 1.0, 1, 1.0, Fixed(0.99))[0] == 1
    t, d = choose_sample(z, 1.0, 0, 0.5, Fixed(0.99))
    assert t == 2 and d["kept"] == 2
    t, d = choose_sample(z, 1.0, 3, 1.0, Fixed(0.99))
    assert t == 0 and d["kept"] == 3
    return got


def main():
    import argparse
    import json
    ap = argparse.ArgumentParser(description="Generate text with an attnlite language "
                                 "model file by the rule of attnlite/generate.h "
                                 "(tools/attnlite_tools/sample.py).")
    ap.add_argument("model", nargs="?")
    ap.add_argument("prompt", nargs="?", default="")
    ap.add_argument("--max-tokens", type=int, default=0,
                    help="new tokens at most (0: until <eos> or the context is full)")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-k", type=int, default=0, help="0: no top-k cut")
    ap.add_argument("--top-p", type=float, default=1.0, help="1: no nucleus cut")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--greedy", action="store_true", help="argmax instead of sampling")
    ap.add_argument("--json", action="store_true", help="print the whole record as JSON")
    ap.add_argument("--self-test", action="store_true",
                    help="check SplitMix64 and the choice rules, then exit")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.self_test:
        got = self_test()
        print("SplitMix64(0):", " ".join(f"0x{g:016X}" for g in got), "ok")
        return
    if not args.model:
        ap.error("a model file is needed")
    m = LanguageModel.load(args.model)
    rec = m.generate(args.prompt, sample=not args.greedy, temperature=args.temperature,
                     top_k=args.top_k, top_p=args.top_p, seed=args.seed,
                     max_tokens=args.max_tokens)
    if args.json:
        print(json.dumps(rec, ensure_ascii=False, indent=1))
    else:
        print(rec["text"])
