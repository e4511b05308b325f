"""Train a small decoder-only (GPT-style) French language model and export it.

    /usr/bin/python3 tools/train_lm.py [CORPUS] [--d-model 128 --layers 3 --heads 4
        --ffn 512 --dropout 0.1 --activation relu] [--epochs 40] [--minutes 40]
        [--threads 1] [--seed 0] [--name lm-fra] [--bench] [--train-limit N]

This is the answer to exercise 10.7.3 (a language model from the Transformer's decoder
alone) made runnable: `embedding` (nn.Embedding, scaled by sqrt(d_model)), `pos_encoding`
(the book's sinusoidal PositionalEncoding, P[i, 2j] = sin(i / 10000^(2j/d)),
P[i, 2j+1] = cos(i / 10000^(2j/d)), max_len 5000, batch-first, its table a non-persistent
buffer so it is not exported), `layers` (an nn.ModuleList of
nn.TransformerEncoderLayer(batch_first=True, norm_first=False, i.e. post-LN): self-attention
with the square causal mask, a float mask with -inf above the diagonal added to the
scores) and `head` (nn.Linear to the vocabulary, not tied to the embedding).  A decoder
layer without cross-attention is exactly an encoder layer with a causal mask, which is
why nn.TransformerEncoderLayer is used (nn.TransformerDecoderLayer needs a memory).
Activation ReLU, the book's position-wise FFN, which attnlite already runs.

Data: the French side of every pair of CORPUS (default ../shared/data/fra-eng/fra.txt),
preprocessed and tokenized as in the book (preprocess_nmt, then split on single spaces as
tokenize_nmt does).  Word level rather than characters: it is the translator's tokenizer
and vocabulary convention, so the C++ side reuses them, and perplexity is per word (plus
<eos>), comparable with other word-level models of this corpus.  The split is the
translator's (splits.py: by SHA-1 of the preprocessed English), so the held-out sentences
are the translator's dev and test French sides.  Within each split the French sentences
are de-duplicated (one French sentence often translates several English ones).  The same
French sentence can still be in train and in dev/test (under different English
sentences); perplexity is also reported on the held-out sentences not in the training
split ("unseen").  Vocabulary: min_freq 2 on the training split, '<unk>' = 0, '<pad>',
'<bos>', '<eos>' = 1, 2, 3 (d2l's Vocab).  A sentence is `<bos> w1 .. wn <eos>`: the
model reads `<bos> w1 .. wn` and predicts `w1 .. wn <eos>`; sentences of more than
MAX_LEN - 1 words (input longer than MAX_LEN = 32 positions) are skipped, in every split
(counted in the log).

Perplexity: exp(sum over every held-out sentence and every predicted token (w1 .. wn and
<eos>; <bos> is never predicted) of -log p(token | previous tokens) / number of predicted
tokens).  Out-of-vocabulary words are <unk> and are predicted as <unk>.

Training: Adam (betas 0.9, 0.98), linear warm-up then inverse-square-root decay, batches
of about --max-tokens padded input tokens of similar-length sentences (right padding; no
key-padding mask is needed because the causal mask already keeps real tokens from seeing
the pads after them, and pad targets are ignored), gradient clipping at 1, no label
smoothing (it would bias perplexity).  Each epoch logs the training loss, dev perplexity
and time to models/NAME.log; the best dev epoch is kept (models/NAME.best.pt) and
exported to models/NAME.f32.safetensors (fp32, not committed); tools/quantize.py makes the
int8 file and tools/lm_ref.py is the PyTorch reference (perplexity, greedy samples).
Training stops at --epochs or when another epoch would pass --minutes.

File: state_dict() under PyTorch's names (embedding.weight, layers.N.self_attn.
in_proj_weight (3D, D) / in_proj_bias / out_proj.weight / out_proj.bias, layers.N.linear1.*,
layers.N.linear2.*, layers.N.norm1.*, layers.N.norm2.*, head.weight, head.bias) plus
__metadata__: attnlite.format "1", attnlite.kind "lm", attnlite.config (JSON: vocab_size,
d_model, num_heads, num_layers, dim_feedforward, activation, norm_first, layer_norm_eps,
bias, max_len, pos_max_len), attnlite.vocab (JSON array), attnlite.eval (JSON: dev and
test perplexity, split sizes), attnlite.training (JSON), attnlite.license.
"""
import argparse
import collections
import json
import math
import os
import platform
import random
import time

import torch
from torch import nn

from . import lm
from . import splits
from .lm_ref import greedy, perplexity
from .paths import DEFAULT_CORPUS, ROOT
from .train_book import Logger
from .train_corpus import add_run_args, length_batches, optimizer_step, pad, warmup_adam

SAMPLE_PROMPTS = ["je", "il est", "nous allons", "elle", "tu"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--activation", default="relu", choices=["relu", "gelu"])
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--max-tokens", type=int, default=3000,
                    help="padded input tokens per batch")
    add_run_args(ap, 40, 40.0, "stop before an epoch that would end after this much "
                 "training", 1, "lm-fra")
    ap.add_argument("--train-limit", type=int, default=0,
                    help="smoke test: train on the first N sentences only")
    return ap.parse_args()


def log_data(log, args, data, fr, enc, skipped, unseen, vocab):
    """The header lines of the log about the data; returns the split sizes."""
    log(f"# corpus {os.path.basename(args.corpus)}: {splits.describe(data)}")
    sizes = {k: dict(sentences=len(fr[k]), used=len(enc[k]), skipped_longer=skipped[k],
                     predicted_tokens=sum(len(s) - 1 for s in enc[k]))
             for k in fr}
    for k in ('dev', 'test'):
        sizes[k]["unseen_sentences"] = len(unseen[k])
    log("# unique French sentences per split (longer than "
        f"{lm.MAX_LEN - 1} words skipped): " + json.dumps(sizes))
    nunk = sum(s.count(vocab.unk) for s in enc['test'])
    log(f"# vocab {len(vocab)} (min_freq 2, train split); <unk> is "
        f"{100 * nunk / sizes['test']['predicted_tokens']:.2f}% of test tokens")
    return sizes


def train(net, args, seqs, dev, pad_id, log, rng):
    """The training loop; keeps the best dev epoch's weights in NAME.best.pt.
    Returns (best dev perplexity, its epoch, epochs run, minutes, best.pt path), or None
    after --bench."""
    nparams = sum(p.numel() for p in net.parameters())
    opt, sched = warmup_adam(net, args.lr, args.warmup)
    loss_fn = nn.CrossEntropyLoss(ignore_index=pad_id, reduction='sum')
    start = time.time()
    best = (float("inf"), 0)
    best_path = os.path.join(args.out, args.name + ".best.pt")
    epoch = 0
    for epoch in range(1, args.epochs + 1):
        net.train()
        t0, tot, ntok = time.time(), 0.0, 0
        batches = length_batches([(len(s) - 1,) for s in seqs], args.max_tokens, rng)
        for bi, b in enumerate(batches):
            Y = pad([seqs[i] for i in b], pad_id)[0]
            logits = net(Y[:, :-1])
            tgt = Y[:, 1:]
            n = int((tgt != pad_id).sum())
            l = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
            optimizer_step(net, opt, sched, l, n)
            tot += float(l)
            ntok += n
            if args.bench and bi == 19:
                dt = time.time() - t0
                print(f"{nparams} params, {dt / 20:.3f} s/batch, {len(batches)} "
                      f"batches/epoch, ~{dt / 20 * len(batches) / 60:.1f} min/epoch")
                return None
        train_min = (time.time() - start) / 60
        dev_ppl = perplexity(net, dev, pad_id)[0]
        log(f"epoch {epoch:3d}, train loss {tot / ntok:.4f} (ppl {math.exp(tot / ntok):.2f}), "
            f"dev ppl {dev_ppl:.2f}, {time.time() - t0:.0f} s, "
            f"lr {sched.get_last_lr()[0]:.2e}")
        if dev_ppl < best[0]:
            best = (dev_ppl, epoch)
            torch.save(net.state_dict(), best_path)
        epoch_min = (time.time() - t0) / 60
        if (time.time() - start) / 60 + epoch_min > args.minutes:
            log(f"# stopping: {train_min:.1f} min of training, another epoch would pass "
                f"--minutes {args.minutes:g}")
            break
    total_min = (time.time() - start) / 60
    log(f"# best dev ppl {best[0]:.2f} at epoch {best[1]} of {epoch}; "
        f"total {total_min:.1f} min")
    return best[0], best[1], epoch, total_min, best_path


def evaluate(net, enc, unseen, pad_id, log):
    """attnlite.eval: dev and test perplexity (all, and not in training), sizes."""
    ev = collections.OrderedDict()
    for k in ('dev', 'test'):
        ppl, nll, n = perplexity(net, enc[k], pad_id)
        ppl_u = perplexity(net, unseen[k], pad_id)[0]
        ev[k + "_ppl"] = round(ppl, 3)
        ev[k + "_unseen_ppl"] = round(ppl_u, 3)
        ev[k + "_sentences"] = len(enc[k])
        ev[k + "_unseen_sentences"] = len(unseen[k])
        ev[k + "_predicted_tokens"] = n
        log(f"# {k}: perplexity {ppl:.3f} ({n} predicted tokens, {len(enc[k])} sentences); "
            f"on the {len(unseen[k])} not in the training split {ppl_u:.3f}")
    ev["train_sentences"] = len(enc['train'])
    ev["formula"] = ("exp(sum of -log p(next token) over every predicted token "
                     "(words and <eos>, not <bos>) / number of predicted tokens)")
    return ev


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    data = splits.load(args.corpus)
    fr = lm.french_splits(data)
    vocab = lm.make_vocab(fr)
    pad_id = vocab['<pad>']
    enc, skipped = {}, {}
    for k in fr:
        enc[k], skipped[k] = lm.encode(fr[k], vocab)
    unseen = {k: lm.encode(lm.unseen(fr, k), vocab)[0] for k in ('dev', 'test')}

    log = Logger(None if args.bench else os.path.join(args.out, args.name + ".log"))
    hp = dict(d_model=args.d_model, num_heads=args.heads, num_layers=args.layers,
              dim_feedforward=args.ffn, activation=args.activation, dropout=args.dropout,
              lr=args.lr, warmup=args.warmup, max_tokens=args.max_tokens)
    cfg = lm.lm_config(len(vocab), hp)
    log(f"# {args.name}: decoder-only Transformer language model on the corpus's French")
    log(f"# torch {torch.__version__}, python {platform.python_version()}, "
        f"threads {torch.get_num_threads()}, seed {args.seed}")
    log_data(log, args, data, fr, enc, skipped, unseen, vocab)
    log("# hyper-parameters " + json.dumps(hp))
    log("# config " + json.dumps(cfg))

    net = lm.DecoderOnlyLM(len(vocab), args.d_model, args.heads, args.layers, args.ffn,
                           args.dropout, args.activation)
    log(f"# parameters {sum(p.numel() for p in net.parameters())}")
    seqs = enc['train'][:args.train_limit] if args.train_limit else enc['train']
    result = train(net, args, seqs, enc['dev'], pad_id, log, rng)
    if result is None:
        return
    _, best_epoch, epochs_run, total_min, best_path = result
    net.load_state_dict(torch.load(best_path))
    net.eval()
    ev = evaluate(net, enc, unseen, pad_id, log)
    for p in SAMPLE_PROMPTS:
        log(f"{p} => {greedy(net, vocab, p)}")
    training = dict(hp, epochs=best_epoch, epochs_run=epochs_run,
                    minutes=round(total_min, 1),
                    seed=args.seed, optimizer="adam", grad_clip=1.0, min_freq=2,
                    threads=args.threads, torch=torch.__version__,
                    data="unique French sentences of the train split, preprocess_nmt, "
                         f"split on spaces; longer than {lm.MAX_LEN - 1} words skipped",
                    split="sha1(english) % 100: 0-1 dev, 2-5 test, rest train")
    path = os.path.join(args.out, args.name + ".f32.safetensors")
    nbytes = lm.save_lm(net, path, cfg, vocab, ev, training)
    log(f"# exported {os.path.relpath(path, ROOT)} ({nbytes} bytes)")
    os.remove(best_path)
