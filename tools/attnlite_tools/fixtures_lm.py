"""Fixtures of the decoder-only language model (kind "lm"), for attnlite's lm tests.

    /usr/bin/python3 tools/make_lm_fixtures.py [--out tests/fixtures] [--corpus FRA.TXT]
        [--model models/lm-fra.safetensors] [--random-only]

1. Fidelity of the forward pass, on small random models (CASES): per case
   tests/fixtures/lm_<case>.safetensors, a model file exactly as attnlite reads it
   (lm.save_lm's format: the state_dict() names, F32, attnlite.kind "lm",
   attnlite.config, attnlite.vocab; with bias false the encoder layers hold no bias at all
   and the head's bias is present or not on its own), and lm_<case>.expect.safetensors:

     in.ids      I64 (T)              <bos> = 2, then random ids in [0, V)
     out.logits  F32 (T, V)           the full causal pass of the batch-1 sequence
     out.attn    F32 (L, NH, T, T)    per-head attention weights of every layer
     out.hidden  F32 (L + 1, T, D)    embedding * sqrt(D) + P, then each layer's output

   with __metadata__ config (the model's attnlite.config), case, head_bias.
   Every weight is random (torch.manual_seed per case): N(0, 1/fan_in) matrices,
   N(0, 1/D) embedding (times sqrt(D): unit entries), 0.1 * N(0, 1) biases, LayerNorm
   weights 1 + 0.1 * N(0, 1) and biases 0.1 * N(0, 1), so that no softmax is uniform or
   one-hot. PyTorch 1.13's nn.TransformerEncoderLayer has no `bias` argument: the
   bias-free layers get nn.MultiheadAttention(bias=False), bias-free linear1/linear2 and
   zero LayerNorm biases (left out of the file).

   The attention weights come from calling each layer's self_attn on its attention input
   (the layer input for post-LN, norm1 of it for pre-LN) with need_weights=True; the
   layer's output is recomputed from them and must equal the layer's own output (1e-6).
   Then an explicit forward pass written from the file's tensors alone (as a runtime
   computes it) must give out.logits and out.attn (1e-5).

2. The shipped model models/lm-fra.safetensors (its int8 weights dequantized, scale * q
   in float32, as lm.load_lm does):
     lm_fra_samples.json   greedy and sampled generations (sample.py's rule)
     lm_fra_ppl.txt/.json  perplexity of 40 held-out test sentences plus lines that are
                           skipped or sit at the context limit; and, for the record, the
                           perplexity of the whole held-out test split.

Rewrites the lm section of tests/fixtures/README.md.
"""
import argparse
import collections
import json
import math
import os

import torch
from torch import nn
import torch.nn.functional as F

from . import export
from . import lm
from . import safetensors as st
from .fixtures_layers import assert_close
from .paths import DEFAULT_CORPUS, FIXTURES_DIR, MODELS_DIR, ROOT
from .sample import LanguageModel

LM_MARKER = "<!-- lm fixtures -->"

# name -> case. Everything not given takes BASE's value.
BASE = dict(vocab_size=23, d_model=16, num_heads=2, num_layers=2, dim_feedforward=32,
            activation="relu", norm_first=False, layer_norm_eps=1e-5, bias=True,
            max_len=16, head_bias=True, T=7)
CASES = collections.OrderedDict([
    ("post_relu", dict(seed=101, what="post-LN, ReLU, biases everywhere (the shipped "
                       "model's layout)")),
    ("pre_gelu_eps6", dict(seed=102, norm_first=True, activation="gelu", num_heads=4,
                           layer_norm_eps=1e-6, max_len=8,
                           what="pre-LN, exact (erf) GELU, 4 heads of 4, LayerNorm eps "
                                "1e-6, context 8 (T 7 fills all but one position)")),
    ("post_gelu_nobias", dict(seed=103, activation="gelu", bias=False, head_bias=False,
                              num_layers=3, dim_feedforward=24,
                              what="post-LN, GELU, 3 layers, no bias anywhere (not in the "
                                   "layers, not in the head)")),
    ("pre_relu_nobias", dict(seed=104, norm_first=True, num_heads=1, bias=False,
                             what="pre-LN, ReLU, one head of 16, no bias in the layers but "
                                  "a head bias")),
    ("d512", dict(seed=105, d_model=512, num_heads=8, num_layers=1, dim_feedforward=64,
                  vocab_size=17, max_len=8, T=6,
                  what="the lab report's width: D 512, 8 heads of 64, one post-LN ReLU "
                       "layer, F 64, V 17")),
])
CONFIG_KEYS = ["vocab_size", "d_model", "num_heads", "num_layers", "dim_feedforward",
               "activation", "norm_first", "layer_norm_eps", "bias", "max_len",
               "pos_max_len"]


def case_config(case):
    c = dict(BASE, **case)
    cfg = collections.OrderedDict((k, c[k]) for k in CONFIG_KEYS if k in c)
    cfg["pos_max_len"] = lm.POS_MAX_LEN
    return cfg, c


def case_vocab(V):
    return ['<unk>', '<pad>', '<bos>', '<eos>'] + [f"w{i}" for i in range(4, V)]


def build_random(cfg, head_bias):
    """A DecoderOnlyLM (dropout 0, eval mode) of cfg with random weights as described
    above; bias false swaps in bias-free attention and linear layers."""
    D, NH, V = cfg["d_model"], cfg["num_heads"], cfg["vocab_size"]
    Fd = cfg["dim_feedforward"]
    net = lm.build(cfg, dropout=0.0)
    if not cfg["bias"]:
        for layer in net.layers:
            layer.self_attn = nn.MultiheadAttention(D, NH, dropout=0.0, bias=False,
                                                    batch_first=True)
            layer.linear1 = nn.Linear(D, Fd, bias=False)
            layer.linear2 = nn.Linear(Fd, D, bias=False)
    if not head_bias:
        net.head = nn.Linear(D, V, bias=False)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name == "embedding.weight":
                p.normal_(0, D ** -0.5)
            elif name.endswith("norm1.weight") or name.endswith("norm2.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape))
            elif name.endswith("norm1.bias") or name.endswith("norm2.bias"):
                if cfg["bias"]:
                    p.normal_(0, 0.1)
                else:
                    p.zero_()
            elif name.endswith("bias"):
                p.normal_(0, 0.1)
            else:  # (out, in) matrices
                p.normal_(0, p.shape[1] ** -0.5)
    net.eval()
    return net


def file_tensors(net, cfg):
    """The state dict as the file holds it: F32, bias-free layers without norm biases."""
    out = collections.OrderedDict()
    for k, v in net.state_dict().items():
        if not cfg["bias"] and (k.endswith("norm1.bias") or k.endswith("norm2.bias")):
            assert not v.any()
            continue
        out[k] = v.detach().float().contiguous()
    return out


def expected_names(cfg, head_bias):
    names = ["embedding.weight"]
    for i in range(cfg["num_layers"]):
        p = f"layers.{i}."
        for n in ("self_attn.in_proj_weight", "self_attn.in_proj_bias",
                  "self_attn.out_proj.weight", "self_attn.out_proj.bias",
                  "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
                  "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"):
            if cfg["bias"] or not n.endswith("bias"):
                names.append(p + n)
    names.append("head.weight")
    if head_bias:
        names.append("head.bias")
    return names


@torch.no_grad()
def traced_forward(net, cfg, ids):
    """(logits (T, V), attn (L, NH, T, T), hidden (L + 1, T, D)) of the batch-1 causal
    pass, the attention weights taken from each layer's self_attn and the layer output
    recomputed from the pieces and checked against the layer's own."""
    X = torch.tensor([ids], dtype=torch.int64)
    T = len(ids)
    mask = lm.causal_mask(T)
    act = F.relu if cfg["activation"] == "relu" else F.gelu
    H = net.pos_encoding(net.embedding(X) * math.sqrt(cfg["d_model"]))
    hidden, attn = [H[0]], []
    for i, layer in enumerate(net.layers):
        a = layer.norm1(H) if cfg["norm_first"] else H
        o, w = layer.self_attn(a, a, a, attn_mask=mask, need_weights=True,
                               average_attn_weights=False)
        if cfg["norm_first"]:
            x = H + o
            x = x + layer.linear2(act(layer.linear1(layer.norm2(x))))
        else:
            x = layer.norm1(H + o)
            x = layer.norm2(x + layer.linear2(act(layer.linear1(x))))
        own = layer(H, src_mask=mask)
        assert_close(own, x, 1e-6, f"layer {i} output vs its recomputation")
        attn.append(w[0])
        H = own
        hidden.append(H[0])
    logits = net.head(H)
    assert_close(net(X), logits, 1e-6, "net(X) vs the traced pass")
    return logits[0], torch.stack(attn, 0), torch.stack(hidden, 0)


def explicit_forward(W, cfg, ids):
    """(logits, attn) from the file's tensors alone, the way a runtime computes them:
    embedding * sqrt(D) + the book's P, then per layer masked per-head softmax attention,
    LayerNorm (post- or pre-), ReLU/GELU FFN, then the head. Absent biases are zero."""
    D, NH = cfg["d_model"], cfg["num_heads"]
    dh, T, eps = D // NH, len(ids), cfg["layer_norm_eps"]
    zero = torch.zeros

    def b(name, n):
        return W[name] if name in W else zero(n)

    X = W["embedding.weight"][ids] * math.sqrt(D)
    pos = torch.arange(lm.POS_MAX_LEN, dtype=torch.float32)[:, None] / torch.pow(
        10000, torch.arange(0, D, 2, dtype=torch.float32) / D)
    P = torch.zeros(lm.POS_MAX_LEN, D)
    P[:, 0::2], P[:, 1::2] = torch.sin(pos), torch.cos(pos)
    X = X + P[:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    act = torch.relu if cfg["activation"] == "relu" else F.gelu

    def ln(x, p):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + eps) * W[p + ".weight"] + b(p + ".bias", D)

    attn = []
    for i in range(cfg["num_layers"]):
        p = f"layers.{i}."

        def sa(x):
            qkv = x @ W[p + "self_attn.in_proj_weight"].T + b(p + "self_attn.in_proj_bias",
                                                             3 * D)
            q, k, v = qkv[:, :D], qkv[:, D:2 * D], qkv[:, 2 * D:]
            heads, ws = [], []
            for j in range(NH):
                s = slice(j * dh, (j + 1) * dh)
                scores = (q[:, s] @ k[:, s].T / math.sqrt(dh)).masked_fill(mask, -math.inf)
                w = torch.softmax(scores, -1)
                ws.append(w)
                heads.append(w @ v[:, s])
            attn.append(torch.stack(ws, 0))
            return torch.cat(heads, 1) @ W[p + "self_attn.out_proj.weight"].T \
                + b(p + "self_attn.out_proj.bias", D)

        def ffn(x):
            h = act(x @ W[p + "linear1.weight"].T + b(p + "linear1.bias",
                                                      cfg["dim_feedforward"]))
            return h @ W[p + "linear2.weight"].T + b(p + "linear2.bias", D)

        if cfg["norm_first"]:
            X = X + sa(ln(X, p + "norm1"))
            X = X + ffn(ln(X, p + "norm2"))
        else:
            X = ln(X + sa(X), p + "norm1")
            X = ln(X + ffn(X), p + "norm2")
    return X @ W["head.weight"].T + b("head.bias", cfg["vocab_size"]), torch.stack(attn, 0)


def write_case(out_dir, name, case):
    cfg, c = case_config(case)
    torch.manual_seed(c["seed"])
    net = build_random(cfg, c["head_bias"])
    T, V = c["T"], cfg["vocab_size"]
    assert T <= cfg["max_len"]
    ids = [2] + torch.randint(0, V, (T - 1,)).tolist()
    tensors = file_tensors(net, cfg)
    assert list(tensors) == expected_names(cfg, c["head_bias"]), list(tensors)
    meta = collections.OrderedDict([
        ("attnlite.format", export.FORMAT), ("attnlite.kind", "lm"),
        ("attnlite.config", json.dumps(cfg)),
        ("attnlite.vocab", json.dumps(case_vocab(V)))])
    model_path = os.path.join(out_dir, f"lm_{name}.safetensors")
    n_model = st.save(model_path, tensors, meta)

    logits, attn, hidden = traced_forward(net, cfg, ids)
    # the file read back, computed from its tensors alone
    W, back_meta = st.load(model_path)
    assert json.loads(back_meta["attnlite.config"]) == cfg
    ref_logits, ref_attn = explicit_forward(W, cfg, ids)
    d_logits = float((ref_logits - logits).abs().max())
    d_attn = float((ref_attn - attn).abs().max())
    assert d_logits < 1e-5 and d_attn < 1e-5, (name, d_logits, d_attn)
    expect = collections.OrderedDict([
        ("in.ids", torch.tensor(ids, dtype=torch.int64)), ("out.logits", logits),
        ("out.attn", attn), ("out.hidden", hidden)])
    expect = collections.OrderedDict((k, v.detach().contiguous()) for k, v in expect.items())
    emeta = collections.OrderedDict([("config", json.dumps(cfg)), ("case", name),
                                     ("head_bias", json.dumps(c["head_bias"]))])
    n_expect = st.save(os.path.join(out_dir, f"lm_{name}.expect.safetensors"), expect, emeta)
    stats = dict(max_attn=float(attn.max()), min_row_max=float(attn.max(-1).values.min()),
                 logit_std=float(logits.std()), d_logits=d_logits, d_attn=d_attn)
    if cfg["layer_norm_eps"] != 1e-5:  # how far PyTorch's default eps would be off
        other = dict(cfg, layer_norm_eps=1e-5)
        stats["d_eps"] = float((explicit_forward(W, other, ids)[0] - logits).abs().max())
    print(f"lm_{name}: model {n_model} bytes, expect {n_expect} bytes; explicit pass "
          f"|dlogits| {d_logits:.2g} |dattn| {d_attn:.2g}; attention row maxima "
          f"{stats['min_row_max']:.3f} .. {stats['max_attn']:.3f} (row 0 is 1); "
          f"logit std {stats['logit_std']:.3f}")
    return dict(name=name, cfg=cfg, case=c, tensors=tensors, expect=expect,
                n_model=n_model, n_expect=n_expect, stats=stats)


# ---------------------------------------------------------------------------------------
# The shipped model

# (prompt, options); options not given: greedy, temperature 1, top_k 0, top_p 1, seed 0,
# max_tokens 0 (until <eos> or the context is full). The seeds of the top_p 0.9 and the
# temperature 1.5 cases were picked (27 and 11, the first of 5.. and 8.. that do) so that
# every sampled case keeps its choices at least 1e-4 of probability mass from a boundary;
# the others are the first seeds tried.
SAMPLE_CASES = [
    ("je", {}),
    ("il est", {}),
    ("nous allons", {}),
    ("je", dict(sample=True, seed=1)),
    ("je", dict(sample=True, seed=2)),
    ("elle", dict(sample=True, temperature=0.7, seed=3)),
    ("tu", dict(sample=True, top_k=5, seed=4)),
    ("nous", dict(sample=True, top_p=0.9, seed=27)),
    ("il", dict(sample=True, temperature=0.8, top_k=40, top_p=0.95, seed=6)),
    ("je xyzzy", dict(sample=True, seed=7)),
    ("je xyzzy", {}),
    ("il est", dict(sample=True, temperature=1.5, seed=11, max_tokens=4)),
]
OPTION_DEFAULTS = collections.OrderedDict([
    ("sample", False), ("temperature", 1.0), ("top_k", 0), ("top_p", 1.0), ("seed", 0),
    ("max_tokens", 0)])
NEAR_TIE = 1e-6

# Lines added to the 40 test sentences of lm_fra_ppl.txt: (position, text).
PPL_EXTRA = [
    (10, ""),
    # 31 words: the longest sentence that fits (<bos> + 31 words = 32 positions)
    (20, "je pense que nous devrions partir tôt demain matin parce que la route est "
         "longue , il fait froid et nous ne voulons pas arriver trop tard chez notre amie ."),
    # 37 words: more than 31, skipped
    (30, "quand nous sommes arrivés à la gare , le train était déjà parti , alors nous "
         "avons attendu le suivant pendant deux heures en buvant du café et en parlant de "
         "nos vacances à la mer ."),
]
PPL_SENTENCES = 40


def sample_fixture(model_path):
    m = LanguageModel.load(model_path)
    cases, worst = [], None
    for prompt, opts in SAMPLE_CASES:
        o = collections.OrderedDict((k, opts.get(k, v)) for k, v in OPTION_DEFAULTS.items())
        rec = m.generate(prompt, **o)
        # the same choices with temperature and top_p unrounded (float64)
        rec64 = m.generate(prompt, **dict(o, temperature=float(o["temperature"]),
                                          top_p=float(o["top_p"])))
        assert rec["tokens"] == rec64["tokens"]
        c = collections.OrderedDict([
            ("prompt", prompt), ("options", o), ("tokens", rec["tokens"]),
            ("text", rec["text"]), ("continuation", rec["continuation"]),
            ("probs", rec["probs"]), ("eos", rec["eos"]),
            ("num_prompt", rec["num_prompt"]), ("num_unknown", rec["num_unknown"]),
            ("margins", rec["margins"]), ("min_margin", min(rec["margins"]))])
        if o["sample"]:
            c["uniforms"] = rec["uniforms"]
            if worst is None or c["min_margin"] < worst[0]:
                worst = (c["min_margin"], len(cases))
        cases.append(c)
        print(f"{prompt!r} {dict(o)} => {rec['text']!r} (eos {rec['eos']}, "
              f"min margin {c['min_margin']:.3g})")
    near = [i for i, c in enumerate(cases) if c["options"]["sample"]
            and c["min_margin"] < NEAR_TIE]
    doc = collections.OrderedDict([
        ("model", os.path.relpath(model_path, ROOT)),
        ("weights", "int8 dequantized: scale * q in float32 (lm.load_lm)"),
        ("context", m.context),
        ("rule", "tools/attnlite_tools/sample.py (attnlite/generate.h); temperature and "
                 "top_p rounded to float32 before use"),
        ("margins", "per generated token; greedy: top-1 minus top-2 logit; sampling: the "
                    "smallest distance of u to the running sums around it (relative to "
                    "the kept sum), of the top_p cut and of the top_k cut, in probability "
                    "mass"),
        ("near_tie_threshold", NEAR_TIE),
        ("near_ties", near),
        ("smallest_sampling_margin", worst[0]),
        ("cases", cases)])
    return doc, m


def ppl_fixture(m, corpus):
    from . import splits
    from .lm_ref import perplexity
    fr = lm.french_splits(splits.load(corpus))
    lines = [' '.join(s) for s in fr['test'][:PPL_SENTENCES]]
    for pos, text in PPL_EXTRA:
        lines.insert(pos, text)
    assert len(PPL_EXTRA[1][1].split(' ')) == m.context - 1
    assert len(PPL_EXTRA[2][1].split(' ')) > m.context - 1
    rec = m.perplexity_lines(lines)
    # the whole held-out test split, the same formula (float64, batch 1)
    enc, skipped = lm.encode(fr['test'], m.vocab)
    nll, ntok = 0.0, 0
    for seq in enc:
        s, n = m.sentence_nll(seq[1:-1])
        nll, ntok = nll + s, ntok + n
    ppl32 = perplexity(m.net, enc, m.index['<pad>'])[0]  # lm_ref's batched float32 sum
    test = collections.OrderedDict([
        ("sentences", len(enc)), ("skipped", skipped), ("tokens", ntok), ("nll", nll),
        ("perplexity", math.exp(nll / ntok)), ("lm_ref_perplexity", ppl32)])
    doc = collections.OrderedDict([
        ("model", "models/lm-fra.safetensors"), ("file", "tests/fixtures/lm_fra_ppl.txt"),
        ("lines", len(lines)),
        ("added_lines", collections.OrderedDict(
            (k, lines.index(text) + 1) for k, (_, text) in zip(("empty", "fits", "too_long"),
                                                                 PPL_EXTRA))),
        ("nll", rec["nll"]), ("tokens", rec["tokens"]), ("sentences", rec["sentences"]),
        ("skipped", rec["skipped"]), ("perplexity", rec["perplexity"]),
        ("per_line", rec["per_line"]),
        ("test_split", test)])
    print(f"lm_fra_ppl: {rec['sentences']} sentences, {rec['skipped']} skipped, "
          f"{rec['tokens']} tokens, perplexity {rec['perplexity']:.4f}; whole test split "
          f"{test['perplexity']:.4f} ({len(enc)} sentences; lm_ref {ppl32:.4f})")
    return lines, doc


def dump_json(path, doc):
    with open(path, "w") as f:
        f.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


def make():
    """Writes the fixtures (the command line of tools/make_lm_fixtures.py); returns the output
    folder, the random cases' results, and the shipped model's samples and perplexity (None
    with --random-only). fixtures_lm_readme.main() writes the README section from them."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=FIXTURES_DIR)
    ap.add_argument("--model", default=os.path.join(MODELS_DIR, "lm-fra.safetensors"))
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--random-only", action="store_true",
                    help="only the random-model files (no shipped model, no corpus); "
                         "README.md is left as it is")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    os.makedirs(args.out, exist_ok=True)
    results = [write_case(args.out, name, case) for name, case in CASES.items()]
    samples = ppl = None
    if not args.random_only:
        samples, m = sample_fixture(args.model)
        dump_json(os.path.join(args.out, "lm_fra_samples.json"), samples)
        lines, ppl = ppl_fixture(m, args.corpus)
        with open(os.path.join(args.out, "lm_fra_ppl.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        dump_json(os.path.join(args.out, "lm_fra_ppl.json"), ppl)
    return args.out, results, samples, ppl
