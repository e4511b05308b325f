"""Reproduce the book's two English-French experiments and export the models.

    /usr/bin/python3 tools/train_nmt.py [CORPUS] [--model transformer|bahdanau|both]
                                        [--seed 0] [--threads 2]

CORPUS defaults to ../shared/data/fra-eng/fra.txt (relative to the repository root).
Data as in the book: the first 600 examples (601 lines, the book's `i > num_examples`),
num_steps 10, batch 64, vocabularies with min_freq 2.

  transformer (book 10.7): H=32, 2 layers, 4 heads, FFN 64, dropout 0.1, lr 0.005,
                           200 epochs  -> models/transformer-d2l.safetensors
  bahdanau    (book 10.4): GRU, embed 32, hidden 32, 2 layers, dropout 0.1, lr 0.005,
                           250 epochs  -> models/bahdanau-d2l.safetensors

The loss printed every 10 epochs is the book's: summed masked cross-entropy of the
epoch divided by its number of target tokens.  The full log goes to
models/<name>.train.log.
"""
import argparse
import json
import os
import platform

import torch

from . import d2l
from . import export
from .paths import DEFAULT_CORPUS, MODELS_DIR, ROOT

NUM_EXAMPLES, NUM_STEPS, BATCH_SIZE = 600, 10, 64

EXPERIMENTS = {
    "transformer": dict(name="transformer-d2l", num_hiddens=32, num_layers=2, num_heads=4,
                        ffn_num_hiddens=64, dropout=0.1, lr=0.005, epochs=200),
    "bahdanau": dict(name="bahdanau-d2l", embed_size=32, num_hiddens=32, num_layers=2,
                     dropout=0.1, lr=0.005, epochs=250),
}


class Logger:
    """Prints each line and writes it to `path` (None: print only); append=True goes on with
    what the file holds (a resumed run's log)."""

    def __init__(self, path, append=False):
        self.f = open(path, "a" if append else "w") if path else None

    def __call__(self, msg):
        print(msg, flush=True)
        if self.f:
            self.f.write(msg + "\n")
            self.f.flush()

    def close(self):
        if self.f:
            self.f.close()


def run(kind, corpus, seed, out_dir, epochs=None):
    hp = dict(EXPERIMENTS[kind])
    if epochs is not None:
        hp["epochs"] = epochs
    name = hp["name"]
    log = Logger(os.path.join(out_dir, name + ".train.log"))
    log(f"# {name}: d2l v0.17 {'10.7 Transformer' if kind == 'transformer' else '10.4 Bahdanau attention'}")
    log(f"# torch {torch.__version__}, python {platform.python_version()}, "
        f"threads {torch.get_num_threads()}, seed {seed}")
    log(f"# corpus {os.path.basename(corpus)}, examples {NUM_EXAMPLES}, num_steps {NUM_STEPS}, "
        f"batch {BATCH_SIZE}")
    log("# hyper-parameters " + json.dumps({k: v for k, v in hp.items() if k != "name"}))

    torch.manual_seed(seed)
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(
        BATCH_SIZE, NUM_STEPS, NUM_EXAMPLES, path=corpus)
    log(f"# examples loaded {len(train_iter.dataset)}, src vocab {len(src_vocab)}, "
        f"tgt vocab {len(tgt_vocab)}")
    if kind == "transformer":
        net = d2l.make_transformer(len(src_vocab), len(tgt_vocab),
                                   num_hiddens=hp["num_hiddens"], num_layers=hp["num_layers"],
                                   num_heads=hp["num_heads"],
                                   ffn_num_hiddens=hp["ffn_num_hiddens"],
                                   dropout=hp["dropout"])
        config = export.transformer_config(src_vocab, tgt_vocab, hp["num_hiddens"],
                                           hp["num_layers"], hp["num_heads"],
                                           hp["ffn_num_hiddens"], NUM_STEPS)
    else:
        net = d2l.make_bahdanau(len(src_vocab), len(tgt_vocab), embed_size=hp["embed_size"],
                                num_hiddens=hp["num_hiddens"], num_layers=hp["num_layers"],
                                dropout=hp["dropout"])
        config = export.bahdanau_config(src_vocab, tgt_vocab, hp["embed_size"],
                                        hp["num_hiddens"], hp["num_layers"], NUM_STEPS)
    losses = d2l.train_seq2seq(net, train_iter, hp["lr"], hp["epochs"], tgt_vocab, log=log)
    final = losses[-1]
    log(f"final loss {final:.6f} (per token, epoch {hp['epochs']})")

    net.eval()
    engs, fras = d2l.BOOK_ENGS, d2l.BOOK_FRAS
    for eng, fra in zip(engs, fras):
        translation, _ = d2l.predict_seq2seq(net, eng, src_vocab, tgt_vocab, NUM_STEPS)
        log(f"{eng} => {translation}, bleu {d2l.bleu(translation, fra, k=2):.3f}")
    if kind == "transformer":
        net.decoder.positions_from_cache = True
        for eng, fra in zip(engs, fras):
            translation, _ = d2l.predict_seq2seq(net, eng, src_vocab, tgt_vocab, NUM_STEPS)
            log(f"[positions from cache] {eng} => {translation}, "
                f"bleu {d2l.bleu(translation, fra, k=2):.3f}")
        net.decoder.positions_from_cache = False

    training = dict(epochs=hp["epochs"], lr=hp["lr"], batch_size=BATCH_SIZE, seed=seed,
                    final_loss=round(final, 6), examples=NUM_EXAMPLES,
                    dropout=hp["dropout"], min_freq=2, optimizer="adam", grad_clip=1.0,
                    init="xavier_uniform")
    path = os.path.join(out_dir, name + ".safetensors")
    n = export.export(net, path, kind, config, src_vocab, tgt_vocab, training)
    log(f"# exported {os.path.relpath(path, ROOT)} ({n} bytes)")
    log.close()
    return final


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--model", choices=["transformer", "bahdanau", "both"], default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=None, help="override (for quick tests)")
    ap.add_argument("--out", default=MODELS_DIR)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    kinds = ["transformer", "bahdanau"] if args.model == "both" else [args.model]
    for kind in kinds:
        run(kind, args.corpus, args.seed, args.out, args.epochs)
