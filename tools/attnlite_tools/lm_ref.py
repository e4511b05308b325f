"""PyTorch reference for an attnlite language model file (tools/train_lm.py).

    /usr/bin/python3 tools/lm_ref.py MODEL.safetensors [CORPUS] [--prompts "je|il est|..."]
        [--threads 1] [--write-split test=FILE]

Loads MODEL (fp32, or int8 from tools/quantize.py: the dequantized weights scale * q)
back into lm.DecoderOnlyLM (dropout 0, eval mode) and prints:

  - dev and test perplexity on the same held-out French sentences as training (the
    translator's split, splits.py; unique sentences; longer than 31 words skipped), with
    the formula of train_lm.py: exp(sum of -log p(next token) over every predicted token,
    <eos> included, <bos> not predicted / number of predicted tokens); also on the
    held-out sentences that are not in the training split;
  - greedy continuations of the prompts (preprocessed with the book's preprocess_nmt,
    read after <bos>, continued until <eos> or 32 input positions);
  - the check of an explicit re-implementation of the forward pass (embedding * sqrt(d)
    + sinusoidal P, then per layer post-LN self-attention with the additive causal mask
    and ReLU/GELU FFN, then the head), written from the tensors alone the way a runtime
    computes it, against nn.TransformerEncoderLayer: largest absolute logit difference.
"""
import argparse
import json
import math

import torch
from torch import nn

from . import d2l
from . import lm
from . import quantize
from . import safetensors as st
from . import splits
from .paths import DEFAULT_CORPUS
from .train_corpus import pad

PROMPTS = ["je", "il est", "nous allons", "elle", "tu"]


@torch.no_grad()
def perplexity(net, seqs, pad_id, max_tokens=4000):
    """(perplexity, summed -log p, predicted tokens) over encoded sentences."""
    was_training = net.training
    net.eval()
    nll, ntok = 0.0, 0
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    b = 0
    while b < len(order):
        e = b
        while e < len(order) and len(seqs[order[e]]) * (e - b + 1) <= max_tokens:
            e += 1
        e = max(e, b + 1)
        Y = pad([seqs[i] for i in order[b:e]], pad_id)[0]
        logits = net(Y[:, :-1])
        nll += float(nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 Y[:, 1:].reshape(-1), ignore_index=pad_id,
                                                 reduction='sum'))
        ntok += int((Y[:, 1:] != pad_id).sum())
        b = e
    net.train(was_training)
    return math.exp(nll / ntok), nll, ntok


@torch.no_grad()
def greedy(net, vocab, prompt, max_words=lm.MAX_LEN - 1):
    """Greedy continuation of a preprocessed prompt (words after <bos>) until <eos>."""
    net.eval()
    ids = [vocab['<bos>']] + vocab[prompt.split(' ')]
    while len(ids) < lm.MAX_LEN and len(ids) - 1 < max_words:
        t = int(net(torch.tensor([ids]))[0, -1].argmax())
        if t == vocab['<eos>']:
            break
        ids.append(t)
    return ' '.join(vocab.to_tokens(ids[1:]))


def manual_logits(W, cfg, ids):
    """Logits (steps, vocab) for one sequence of ids, from the state dict W alone."""
    d, h = cfg["d_model"], cfg["num_heads"]
    dh = d // h
    n = len(ids)
    X = W["embedding.weight"][ids] * math.sqrt(d)
    pos = torch.arange(n, dtype=torch.float32)[:, None] / torch.pow(
        10000, torch.arange(0, d, 2, dtype=torch.float32) / d)
    P = torch.zeros(n, d)
    P[:, 0::2], P[:, 1::2] = torch.sin(pos), torch.cos(pos)
    X = X + P
    mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
    act = torch.relu if cfg["activation"] == "relu" else torch.nn.functional.gelu
    eps = cfg["layer_norm_eps"]

    def ln(x, p):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + eps) * W[p + ".weight"] + W[p + ".bias"]

    for i in range(cfg["num_layers"]):
        p = f"layers.{i}."
        qkv = X @ W[p + "self_attn.in_proj_weight"].T + W[p + "self_attn.in_proj_bias"]
        q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        heads = []
        for j in range(h):
            s = slice(j * dh, (j + 1) * dh)
            scores = q[:, s] @ k[:, s].T / math.sqrt(dh) + mask
            heads.append(torch.softmax(scores, -1) @ v[:, s])
        att = torch.cat(heads, 1) @ W[p + "self_attn.out_proj.weight"].T \
            + W[p + "self_attn.out_proj.bias"]
        X = ln(X + att, p + "norm1")
        ffn = act(X @ W[p + "linear1.weight"].T + W[p + "linear1.bias"]) \
            @ W[p + "linear2.weight"].T + W[p + "linear2.bias"]
        X = ln(X + ffn, p + "norm2")
    return X @ W["head.weight"].T + W["head.bias"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--prompts", default="|".join(PROMPTS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--write-split", metavar="SPLIT=FILE",
                    help="write the held-out split's unique French sentences, one per line "
                         "(e.g. test=/tmp/fr-test.txt; for `attnlite eval --perplexity`)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    net, vocab, info = lm.load_lm(args.model)
    cfg = info["config"]
    quant = "attnlite.quantization" in info
    print(f"{args.model}: {'int8 (dequantized)' if quant else 'fp32'}, "
          f"{sum(t.numel() for t in net.state_dict().values())} parameters, "
          f"vocab {len(vocab)}")
    print("config", json.dumps(cfg))
    if info.get("eval"):
        print("stored eval", json.dumps(info["eval"]))

    fr = lm.french_splits(splits.load(args.corpus))
    if args.write_split:
        k, path = args.write_split.split("=", 1)
        with open(path, "w", encoding="utf-8") as f:
            for sent in fr[k]:
                f.write(" ".join(sent) + "\n")
        print(f"wrote {len(fr[k])} {k} sentences to {path}")
    pad_id = vocab['<pad>']
    for k in ('dev', 'test'):
        enc, skipped = lm.encode(fr[k], vocab)
        ppl, _, n = perplexity(net, enc, pad_id)
        unseen = lm.encode(lm.unseen(fr, k), vocab)[0]
        ppl_u = perplexity(net, unseen, pad_id)[0]
        print(f"{k} perplexity {ppl:.3f} ({len(enc)} sentences, {skipped} skipped, {n} "
              f"predicted tokens); not in train ({len(unseen)} sentences) {ppl_u:.3f}")

    for p in args.prompts.split("|"):
        prompt = d2l.preprocess_nmt(p)
        print(f"{prompt} => {greedy(net, vocab, prompt)}")

    W = quantize.dequantize(st.load(args.model)[0])
    worst = 0.0
    with torch.no_grad():
        for p in args.prompts.split("|"):
            text = greedy(net, vocab, d2l.preprocess_nmt(p))
            ids = [vocab['<bos>']] + vocab[text.split(' ')]
            ref = net(torch.tensor([ids]))[0]
            worst = max(worst, float((manual_logits(W, cfg, ids) - ref).abs().max()))
    print(f"explicit forward vs nn.TransformerEncoderLayer: largest |logit difference| "
          f"{worst:.3g}")
