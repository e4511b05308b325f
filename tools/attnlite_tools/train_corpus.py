"""Train the book's Transformer on the whole English-French corpus and export it.

    /usr/bin/python3 tools/train_corpus.py [CORPUS] [--hiddens 128 --layers 3 --heads 4
        --ffn 512 --dropout 0.1] [--epochs 30] [--minutes 70] [--threads 2] [--seed 0]
        [--name transformer-fra] [--bench]

Data: every pair of CORPUS (default ../shared/data/fra-eng/fra.txt), preprocessed and
tokenized as in the book (tools/attnlite_tools/d2l).  The split is by English sentence:
the SHA-1 of the preprocessed English decides (splits.py), so every French translation of one
English sentence lies in the same split and no test sentence is seen in training.
Vocabularies (min_freq 2) come from the training split only.

Model: d2l.make_transformer (book 10.7) with the sizes given; the exported file is
the same format as the book models (tools/export.py), so attnlite runs it unchanged.
Training differs from the book's loop only in what makes a large corpus train well on
a CPU: batches of similar-length sentences padded to their own longest sentence
(the model takes any length up to num_steps), Adam with warm-up and inverse-square-root
decay, label smoothing 0.1.  Every epoch the dev split is translated greedily (correct
decoder positions, as attnlite decodes by default) and scored with corpus BLEU-4 against
all the references of each English sentence; the epoch with the best dev BLEU is the
one exported.  Test BLEU is measured afterwards (`attnlite eval`, cross-checked by
tools/eval_corpus.py), never here; tools/ship_corpus_model.py makes the int8 file.

Speed: Debian's python3-torch uses whatever libblas.so.3 is installed; the reference BLAS
(libblas3) makes training about ten times slower than OpenBLAS
(`apt-get install libopenblas0-pthread`, which becomes the libblas.so.3 alternative).
"""
import argparse
import json
import math
import os
import platform
import random
import time

import torch
from torch import nn

from . import d2l
from . import export
from . import splits
from .paths import DEFAULT_CORPUS, MODELS_DIR, ROOT
from .search import greedy_decode, strip_eos
from .train_book import Logger

NUM_STEPS = 20


def encode(lines, vocab):
    eos = vocab['<eos>']
    return [vocab[l][:NUM_STEPS - 1] + [eos] for l in lines]


def length_batches(lengths, max_tokens, rng):
    """Lists of indices of examples of similar lengths, shuffled.  lengths[i] is a tuple
    of example i's padded lengths (one per side); examples are sorted by it (ties at
    random) and a batch is closed before its longest length times its size would pass
    max_tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (*lengths[i], rng.random()))
    batches, cur, cur_max = [], [], 0
    for i in order:
        m = max(cur_max, *lengths[i])
        if cur and m * (len(cur) + 1) > max_tokens:
            batches.append(cur)
            cur, m = [], max(lengths[i])
        cur.append(i)
        cur_max = m
    if cur:
        batches.append(cur)
    rng.shuffle(batches)
    return batches


def warmup_adam(net, lr, warmup, offset=0):
    """(Adam, its schedule): linear warm-up over `warmup` steps to lr, then
    inverse-square-root decay; call the schedule's step() after every optimizer step.
    offset: steps already taken by the weights' earlier training (a run that goes on from
    them warms up again, but only to the rate the decay had reached)."""
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, math.sqrt(warmup / (s + 1 + offset))))
    return opt, sched


def optimizer_step(net, opt, sched, loss, ntokens):
    """One step on the per-token loss (loss: summed over ntokens), gradients clipped at 1."""
    opt.zero_grad()
    (loss / ntokens).backward()
    nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    sched.step()


def add_run_args(ap, epochs, minutes, minutes_help, threads, name):
    """The options of a training run after the model's and the optimizer's: --epochs,
    --minutes, --threads, --seed, --name, --out, --bench."""
    ap.add_argument("--epochs", type=int, default=epochs)
    ap.add_argument("--minutes", type=float, default=minutes, help=minutes_help)
    ap.add_argument("--threads", type=int, default=threads)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default=name)
    ap.add_argument("--out", default=MODELS_DIR)
    ap.add_argument("--bench", action="store_true", help="time 20 batches and exit")


def make_batches(src, tgt, max_tokens, rng):
    """Lists of indices whose sentence pairs have similar lengths, shuffled."""
    return length_batches([(len(s), len(t)) for s, t in zip(src, tgt)], max_tokens, rng)


def pad(seqs, pad_id):
    n = max(len(s) for s in seqs)
    return (torch.tensor([s + [pad_id] * (n - len(s)) for s in seqs]),
            torch.tensor([len(s) for s in seqs]))


@torch.no_grad()
def greedy_ids(net, src_ids, bos, eos, pad_id, num_steps, batch=256):
    """Greedy translations (lists of ids, <eos> excluded) of encoded source sentences
    (lists of ids, <eos> included, at most num_steps), in batches padded to num_steps, with
    attnlite's decoder positions, on the net's device; the net is left in training mode."""
    net.eval()
    net.decoder.positions_from_cache = True
    device = next(net.parameters()).device
    out = []
    for b in range(0, len(src_ids), batch):
        chunk = src_ids[b:b + batch]
        X = torch.tensor([s + [pad_id] * (num_steps - len(s)) for s in chunk], device=device)
        vl = torch.tensor([len(s) for s in chunk], device=device)
        out.extend(strip_eos(greedy_decode(net, X, vl, bos, num_steps, eos=eos), eos))
    net.decoder.positions_from_cache = False
    net.train()
    return out


def greedy_batch(net, src_ids, src_vocab, tgt_vocab, batch=256):
    """Greedy translations (tokens joined by spaces) of encoded source sentences."""
    ids = greedy_ids(net, src_ids, tgt_vocab['<bos>'], tgt_vocab['<eos>'], src_vocab['<pad>'],
                     NUM_STEPS, batch)
    return [' '.join(tgt_vocab.to_tokens(s)) for s in ids]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--hiddens", type=int, default=128)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=512)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--max-tokens", type=int, default=2000,
                    help="padded tokens per side per batch")
    add_run_args(ap, 30, 70.0, "stop after this much training", 2, "transformer-fra")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    data = splits.load(args.corpus)
    train = data["train"]
    src_vocab = d2l.Vocab([s for s, _ in train], min_freq=2,
                          reserved_tokens=['<pad>', '<bos>', '<eos>'])
    tgt_vocab = d2l.Vocab([t for _, t in train], min_freq=2,
                          reserved_tokens=['<pad>', '<bos>', '<eos>'])
    src = encode([s for s, _ in train], src_vocab)
    tgt = encode([t for _, t in train], tgt_vocab)
    dev_src, dev_refs = splits.grouped(data["dev"])
    dev_ids = encode([s.split(' ') for s in dev_src], src_vocab)

    log = Logger(None if args.bench else os.path.join(args.out, args.name + ".train.log"))
    hp = dict(num_hiddens=args.hiddens, num_layers=args.layers, num_heads=args.heads,
              ffn_num_hiddens=args.ffn, dropout=args.dropout, lr=args.lr, warmup=args.warmup,
              max_tokens=args.max_tokens, label_smoothing=0.1, num_steps=NUM_STEPS)
    log(f"# {args.name}: d2l 10.7 Transformer on the whole corpus")
    log(f"# torch {torch.__version__}, python {platform.python_version()}, "
        f"threads {torch.get_num_threads()}, seed {args.seed}")
    log(f"# corpus {os.path.basename(args.corpus)}: {splits.describe(data)}")
    log(f"# src vocab {len(src_vocab)}, tgt vocab {len(tgt_vocab)} (min_freq 2, train split)")
    log("# hyper-parameters " + json.dumps(hp))

    net = d2l.make_transformer(len(src_vocab), len(tgt_vocab), num_hiddens=args.hiddens,
                               num_layers=args.layers, num_heads=args.heads,
                               ffn_num_hiddens=args.ffn, dropout=args.dropout)
    net.apply(d2l.xavier_init_weights)
    nparams = sum(p.numel() for p in net.parameters())
    log(f"# parameters {nparams}")
    opt, sched = warmup_adam(net, args.lr, args.warmup)
    loss_fn = nn.CrossEntropyLoss(ignore_index=tgt_vocab['<pad>'], label_smoothing=0.1,
                                  reduction='sum')
    bos = tgt_vocab['<bos>']
    start = time.time()
    best = (-1.0, 0)
    best_path = os.path.join(args.out, args.name + ".best.pt")
    step = 0
    for epoch in range(1, args.epochs + 1):
        net.train()
        t0, tot, ntok = time.time(), 0.0, 0
        batches = make_batches(src, tgt, args.max_tokens, rng)
        for bi, b in enumerate(batches):
            X, X_vl = pad([src[i] for i in b], src_vocab['<pad>'])
            Y, _ = pad([tgt[i] for i in b], tgt_vocab['<pad>'])
            dec_in = torch.cat([torch.full((len(b), 1), bos, dtype=torch.long), Y[:, :-1]], 1)
            Y_hat, _ = net(X, dec_in, X_vl)
            n = int((Y != tgt_vocab['<pad>']).sum())
            l = loss_fn(Y_hat.reshape(-1, Y_hat.shape[-1]), Y.reshape(-1))
            optimizer_step(net, opt, sched, l, n)
            step += 1
            tot += float(l)
            ntok += n
            if args.bench and bi == 19:
                dt = time.time() - t0
                print(f"{args.hiddens}/{args.layers}/{args.heads}/{args.ffn}: {nparams} params, "
                      f"{dt / 20:.3f} s/batch, {len(batches)} batches/epoch, "
                      f"~{dt / 20 * len(batches) / 60:.1f} min/epoch")
                return
        train_min = (time.time() - start) / 60
        hyps = greedy_batch(net, dev_ids, src_vocab, tgt_vocab)
        dev_bleu = splits.corpus_bleu(hyps, dev_refs)
        log(f"epoch {epoch:3d}, loss {tot / ntok:.4f} (label-smoothed, per token), "
            f"dev BLEU-4 {100 * dev_bleu:.2f}, {time.time() - t0:.0f} s, "
            f"lr {sched.get_last_lr()[0]:.2e}")
        if dev_bleu > best[0]:
            best = (dev_bleu, epoch)
            torch.save(net.state_dict(), best_path)
        epoch_min = (time.time() - t0) / 60
        if train_min + epoch_min > args.minutes:
            log(f"# stopping: {train_min:.1f} min of training, another epoch would pass "
                f"--minutes {args.minutes:g}")
            break
    log(f"# best dev BLEU-4 {100 * best[0]:.2f} at epoch {best[1]}; "
        f"total {(time.time() - start) / 60:.1f} min")
    net.load_state_dict(torch.load(best_path))
    net.eval()
    for eng in d2l.BOOK_ENGS:
        ids = encode([eng.split(' ')], src_vocab)
        log(f"{eng} => {greedy_batch(net, ids, src_vocab, tgt_vocab)[0]}")
    config = export.transformer_config(src_vocab, tgt_vocab, args.hiddens, args.layers,
                                       args.heads, args.ffn, NUM_STEPS)
    training = dict(hp, epochs=best[1], seed=args.seed, optimizer="adam", grad_clip=1.0,
                    init="xavier_uniform", min_freq=2, examples=len(train),
                    split="sha1(english) % 100: 0-1 dev, 2-5 test, rest train",
                    dev_bleu4=round(100 * best[0], 2))
    path = os.path.join(args.out, args.name + ".f32.safetensors")
    nbytes = export.export(net, path, "transformer", config, src_vocab, tgt_vocab, training)
    log(f"# exported {os.path.relpath(path, ROOT)} ({nbytes} bytes)")
    os.remove(best_path)
