"""Train the book's Transformer on sub-words of the cased corpus, resumably, and export it.

    /usr/bin/python3 tools/train_subword.py [CORPUS] --bpe TABLE.json [--hiddens 192
        --layers 3 --heads 4 --ffn 768 --dropout 0.1] [--minutes 60] [--threads 2]
        [--name transformer-fra-bpe] [--dir build/train]        # train (or go on training)
    /usr/bin/python3 tools/train_subword.py --bpe TABLE.json --finish [--average 5]
                                                               # average, pick, export
    /usr/bin/python3 tools/train_subword.py --init models/transformer-fra-bpe.safetensors \
        --noise [--numbers 5] [--names 1] [--titles 0.25] [--short 1] [--capitals 0.3] \
        --name NAME [--minutes 100]
                                                               # go on from a shipped model

Data: the pairs as written (cased), split as tools/splits.py splits them (by the SHA-1 of the
preprocessed English, so the test sentences are the ones of the word-level model), both sides
segmented by one joint byte-pair table (tools/bpe.py, learned on the training split).  The
English side is normalized as every translator normalizes its input (tools/normalize.py).
With --noise, each epoch draws anew how each English sentence is typed (normalize.casual:
half as written, the rest lowercased, without the final punctuation, all capitals or
without apostrophes); the French side always stays as written.  With --numbers K, each epoch
also adds K copies of every training pair that names one number (tools/numerals.py:
"I have two children." / "J'ai deux enfants."), the number written anew in digits on both
sides each time ("I have 47 children." / "J'ai 47 enfants."), and logs how many of the dev
split's such pairs (respelled three times, fixed digits) come out with their digits.  With
--names K, each epoch also adds K copies of every training pair that names Tom or Mary
(tools/names.py), with another man's and another woman's name drawn each time on both sides
("Tom loves Mary." / "Tom aime Marie." -> "Lukas loves Aminata." / "Lukas aime Aminata."),
and logs how many of the dev split's such pairs, with names training never draws, come out
with their names.  With --titles P, each of those people is, with probability P, a title
and a surname instead ("Mr. Smith loves Ms. Kaya." / "M. Smith aime Mme Kaya."; the corpus
has no "Mr." at all, and "Mr. Smith is here." came out "Mère est ici."), and the dev log
counts the titled people carried over too.  With --short K, each epoch also adds K more copies of every training pair
whose English has at most SHORT_WORDS (3) words, 13,709 pairs: the phrases people type most,
and those a model that learned to carry names over takes most readily for a name ("Run!" ->
"Rouis !", tools/invented.py).  With --capitals P, each English sentence (as typed, the
copies above too) has, with probability P, one of its lowercase words capitalized
(normalize.capitalize_one: "I saw a Wonderful film."), drawn anew each epoch: the English
of the corpus writes "wonderful" 56 times and "Wonderful" once, and a sentence that starts
with a word mostly written lowercase is otherwise read as starting with a name it never saw
("Wonderful!" -> "Wonvente !").

Going on from a model (--init FILE): the weights (int8 files: the fp32 weights they stand
for), its shape and its merge table come from the file; the schedule goes on from the
steps the file's training took (its epochs, and those of the runs it went on from, times
this corpus's batches per epoch), after a short warm-up of fresh Adam moments.

Model: d2l.make_transformer (book 10.7) with one vocabulary for both languages and one
embedding table shared by the encoder, the decoder and the decoder's output layer (whose
bias stays its own); the shared table starts as N(0, 1/num_hiddens), so that embedding *
sqrt(num_hiddens) starts at unit scale.  Training as tools/train_corpus.py: batches of
similar-length sentences, Adam with warm-up and inverse-square-root decay, label smoothing
0.1, gradients clipped at 1.

Resuming: after every epoch DIR/NAME/ holds epoch<N>.pt (the weights) and state.pt (the
optimizer, the schedule, the random generators, the epoch and the dev BLEU history); a run
started again goes on from there, and its lines and --finish's go on in DIR/NAME/train.log.
--minutes bounds one run.

Choosing: every epoch the dev split is translated greedily and scored with corpus BLEU-4 on
the book's tokens (the detokenized translation lowercased and preprocessed as the book
does), as written and, with --noise, also lowercased without final punctuation (the mean of
the two is the score).  --finish scores the average of the last K epochs' weights for
K = 1 .. --average, keeps the best (ties to the fewer), and exports it with the merge table
in the metadata.

Device: CUDA when PyTorch sees a GPU (--device cpu to refuse it), else the CPU.
"""
import argparse
import glob
import json
import os
import platform
import random
import re
import time

import torch
from torch import nn

from . import bpe
from . import d2l
from . import export
from . import names
from . import normalize
from . import numerals
from . import splits
from .paths import DEFAULT_CORPUS, MODELS_DIR, ROOT
from .train_book import Logger
from .train_corpus import greedy_ids, length_batches, optimizer_step, pad, warmup_adam

NUM_STEPS = 32
SHORT_WORDS = 3
SPECIALS = ['<unk>', '<pad>', '<bos>', '<eos>']


def vocabulary(alphabet, merges):
    return export.vocab_from_tokens(SPECIALS + bpe.symbols(alphabet, merges))


def encode(pieces, vocab):
    eos = vocab['<eos>']
    return [vocab[p][:NUM_STEPS - 1] + [eos] for p in pieces]


def book_tokens(text):
    """The book's tokens of a sentence: lowercased, preprocessed, split on spaces."""
    return d2l.preprocess_nmt(text).split(' ')


def make_net(V, args, dropout):
    net = d2l.make_transformer(V, V, num_hiddens=args.hiddens, num_layers=args.layers,
                               num_heads=args.heads, ffn_num_hiddens=args.ffn, dropout=dropout)
    net.apply(d2l.xavier_init_weights)
    tie(net)
    nn.init.normal_(net.decoder.embedding.weight, std=args.hiddens ** -0.5)
    return net


def tie(net):
    """One table for the source embedding, the target embedding and the output layer."""
    net.encoder.embedding = net.decoder.embedding
    net.decoder.dense.weight = net.decoder.embedding.weight


def shared_state(net):
    """state_dict() with the shared table once, as decoder.embedding.weight."""
    sd = net.state_dict()
    return {k: v for k, v in sd.items()
            if k not in ("encoder.embedding.weight", "decoder.dense.weight")}


def source_ids(pieces, vocab, num_steps):
    """predict_seq2seq's source, as attnlite reads it: the pieces' ids + <eos>, truncated to
    num_steps (training truncates before <eos> instead: encode)."""
    return ([vocab[p] for p in pieces] + [vocab['<eos>']])[:num_steps]


def translate_pieces(net, src_ids, vocab, num_steps=NUM_STEPS, batch=256):
    """Greedy translations (lists of pieces) of encoded source sentences."""
    ids = greedy_ids(net, src_ids, vocab['<bos>'], vocab['<eos>'], vocab['<pad>'], num_steps,
                     batch)
    return [vocab.to_tokens(s) for s in ids]


def grouped_raw(pairs):
    """(English sentences, one per preprocessed English sentence, first-seen form; lists of
    their French references as written)."""
    refs, first = {}, {}
    for s, t in pairs:
        key = d2l.preprocess_nmt(s)
        first.setdefault(key, s)
        refs.setdefault(key, []).append(t)
    keys = list(first)
    return [first[k] for k in keys], [refs[k] for k in keys]


def dev_bleu(net, dev_ids, dev_refs, vocab):
    hyps = [' '.join(book_tokens(bpe.detokenize(p)))
            for p in translate_pieces(net, dev_ids, vocab)]
    refs = [[' '.join(book_tokens(r)) for r in rs] for rs in dev_refs]
    return splits.corpus_bleu(hyps, refs)


class DevSet:
    """The dev split's English sentences (normalized) in the styles scored, their ids, and
    their references; score(net) -> {style: BLEU-4 in [0, 1]} and their mean."""

    def __init__(self, pairs, seg, vocab, styles):
        self.pairs = pairs
        src, self.refs = grouped_raw(pairs)
        src = [normalize.normalize(s) for s in src]
        self.ids = {st: encode([seg(normalize.STYLES[st](s)) for s in src], vocab)
                    for st in styles}
        self.vocab = vocab

    def score(self, net):
        by = {st: dev_bleu(net, ids, self.refs, self.vocab) for st, ids in self.ids.items()}
        return by, sum(by.values()) / len(by)


def dev_digits(net, pairs, seg, vocab):
    """How many of the dev split's pairs that name one number, respelled three times with
    fixed digits, come out with their digits carried over (greedy): (carried, total)."""
    rng = random.Random(0)
    pairs = [(normalize.normalize(e), t) for e, t in pairs]
    english = [numerals.respell(e, t, rng)[0]
               for e, t in pairs if numerals.names_one_number(e, t) for _ in range(3)]
    out = translate_pieces(net, encode([seg(e) for e in english], vocab), vocab)
    return sum(numerals.carries_digits(e, bpe.detokenize(p)) for e, p in zip(english, out)), \
        len(english)


def dev_names(net, pairs, seg, vocab, titled_p=0.0):
    """How many of the dev split's pairs that name Tom or Mary, with names training never
    draws (titled_p 1: titles and surnames, "Mr. Dalton"), come out with their names carried
    over (greedy): (carried, total)."""
    rng = random.Random(0)
    english = [p[0] for p in (names.held_out(normalize.normalize(e), t, rng, titled_p)
                              for e, t in pairs) if p]
    out = translate_pieces(net, encode([seg(e) for e in english], vocab), vocab)
    return sum(names.carries_names(e, bpe.detokenize(p)) for e, p in zip(english, out)), \
        len(english)


def carried_text(net, dev, seg, vocab, hp):
    """The dev log's counts of digits and names carried over, for the data that trains them."""
    text = ""
    if "numbers" in hp:
        text += ", dev digits carried %d of %d" % dev_digits(net, dev.pairs, seg, vocab)
    if "names" in hp:
        text += ", dev names carried %d of %d" % dev_names(net, dev.pairs, seg, vocab)
    if "titles" in hp:
        text += ", dev titles carried %d of %d" % dev_names(net, dev.pairs, seg, vocab, 1.0)
    return text


def bleu_text(by):
    return ", ".join(f"{st} {100 * b:.2f}" for st, b in by.items())


def load_init(path, args):
    """Shape, merge table and fp32 weights of a model file to go on from (args updated)."""
    net0, _, _, info = export.load_model(path)
    cfg = info["config"]
    args.hiddens, args.layers = cfg["num_hiddens"], cfg["num_layers"]
    args.heads, args.ffn = cfg["num_heads"], cfg["ffn_num_hiddens"]
    if not cfg.get("shared_embeddings") or "bpe" not in info:
        raise SystemExit(f"{path}: not a sub-word model with shared embeddings")
    # The epochs behind the weights: the file's run and the runs it went on from.
    tr = info["training"]
    return net0.state_dict(), tr.get("epochs", 0) + tr.get("init_epochs", 0)


def average(paths):
    avg = None
    for p in paths:
        sd = torch.load(p, map_location="cpu")
        if avg is None:
            avg = {k: v.clone().double() for k, v in sd.items()}
        else:
            for k in avg:
                avg[k] += sd[k].double()
    return {k: (v / len(paths)).float() for k, v in avg.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--bpe", help="merge table from tools/bpe.py learn (default: --init's)")
    ap.add_argument("--init", help="go on from this model file's weights, shape and table")
    ap.add_argument("--noise", action="store_true", help="type the English side casually")
    ap.add_argument("--numbers", type=int, default=0, metavar="K",
                    help="K copies of each pair that names one number, in other digits")
    ap.add_argument("--names", type=int, default=0, metavar="K",
                    help="K copies of each pair that names Tom or Mary, with other names")
    ap.add_argument("--titles", type=float, default=0.0, metavar="P",
                    help="with probability P, each name --names writes is a title and a "
                         "surname instead (Mr. Smith / M. Smith)")
    ap.add_argument("--short", type=int, default=0, metavar="K",
                    help=f"K more copies of each pair of at most {SHORT_WORDS} English words")
    ap.add_argument("--capitals", type=float, default=0.0, metavar="P",
                    help="with probability P, one lowercase word of an English sentence "
                         "capitalized (normalize.capitalize_one), drawn anew each epoch")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--hiddens", type=int, default=192)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=768)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=600)
    ap.add_argument("--max-tokens", type=int, default=2500)
    ap.add_argument("--minutes", type=float, default=60.0, help="bound of this run")
    ap.add_argument("--epochs", type=int, default=60, help="stop after this epoch")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="transformer-fra-bpe")
    ap.add_argument("--dir", default=os.path.join(ROOT, "build", "train"))
    ap.add_argument("--out", default=MODELS_DIR)
    ap.add_argument("--bench", action="store_true", help="time 20 batches and exit")
    ap.add_argument("--finish", action="store_true", help="average, choose and export")
    ap.add_argument("--average", type=int, default=5)
    args = ap.parse_args()
    for flag in ("numbers", "names", "short"):
        if getattr(args, flag) < 0:
            ap.error(f"--{flag} K: K must be 0 or more, got {getattr(args, flag)}")
    if not 0.0 <= args.capitals <= 1.0:   # also refuses nan
        ap.error(f"--capitals P: P must be a probability in [0, 1], got {args.capitals}")
    if not 0.0 <= args.titles <= 1.0:
        ap.error(f"--titles P: P must be a probability in [0, 1], got {args.titles}")
    if args.titles and not args.names:
        ap.error("--titles P writes some of the names of --names K: give --names too")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    init_state, init_epochs = load_init(args.init, args) if args.init else (None, 0)
    if not args.bpe and not args.init:
        raise SystemExit("--bpe TABLE.json or --init MODEL.safetensors is needed")

    alphabet, merges = bpe.load(args.bpe or args.init)
    seg = bpe.Segmenter(bpe.symbols(alphabet, merges))
    vocab = vocabulary(alphabet, merges)
    data = splits.load_raw(args.corpus)
    train = data["train"]
    english = [normalize.normalize(s) for s, _ in train]
    seg_cache = {}

    def seg_cached(text):
        if text not in seg_cache:
            seg_cache[text] = seg(text)
        return seg_cache[text]

    src = encode([seg_cached(s) for s in english], vocab)
    tgt = encode([seg(t) for _, t in train], vocab)
    # Pairs that name one number, respelled in other digits each epoch (--numbers).
    numbered = [(e, t) for e, (_, t) in zip(english, train) if numerals.names_one_number(e, t)]
    # Pairs that name Tom or Mary, with other names each epoch (--names).
    named = [(e, t) for e, (_, t) in zip(english, train) if names.names_tom_or_mary(e, t)]
    # The shortest sentences, again (--short).
    short = [(e, t) for e, (_, t) in zip(english, train) if len(e.split()) <= SHORT_WORDS]
    styles = ["written", "lower-no-final-punct"] if args.noise else ["written"]
    dev = DevSet(data["dev"], seg, vocab, styles)

    run_dir = os.path.join(args.dir, args.name)
    os.makedirs(run_dir, exist_ok=True)
    # one log for the run: its epochs, each resumption and --finish
    log = Logger(None if args.bench else os.path.join(run_dir, "train.log"), append=True)
    hp = dict(num_hiddens=args.hiddens, num_layers=args.layers, num_heads=args.heads,
              ffn_num_hiddens=args.ffn, dropout=args.dropout, lr=args.lr, warmup=args.warmup,
              max_tokens=args.max_tokens, label_smoothing=0.1, num_steps=NUM_STEPS,
              shared_embeddings=True, source="normalized" + (", casual noise" if args.noise
                                                             else ""))
    if args.numbers:
        hp["numbers"] = f"{args.numbers} respelled copies of {len(numbered)} pairs"
    if args.names:
        hp["names"] = f"{args.names} renamed copies of {len(named)} pairs"
    if args.titles:
        hp["titles"] = f"a title and a surname for {args.titles:g} of the renamed people"
    if args.short:
        hp["short"] = f"{args.short} more copies of {len(short)} pairs"
    if args.capitals:
        hp["capitals"] = f"one word capitalized in {args.capitals:g} of the English sentences"
    net = make_net(len(vocab), args, args.dropout)
    if init_state is not None:
        net.load_state_dict(init_state)
        tie(net)
        hp.update(init=os.path.basename(args.init), init_epochs=init_epochs)
    net.to(device)
    nparams = sum(p.numel() for p in net.parameters())
    state_path = os.path.join(run_dir, "state.pt")
    if args.finish:
        return finish(args, net, vocab, alphabet, merges, seg, dev, hp, log, nparams,
                      len(train), device)

    batches_per_epoch = len(length_batches([(len(s), len(t)) for s, t in zip(src, tgt)],
                                           args.max_tokens, random.Random(0)))
    opt, sched = warmup_adam(net, args.lr, args.warmup, init_epochs * batches_per_epoch)
    loss_fn = nn.CrossEntropyLoss(ignore_index=vocab['<pad>'], label_smoothing=0.1,
                                  reduction='sum')
    epoch0, history = 0, []
    if os.path.exists(state_path) and not args.bench:
        st = torch.load(state_path)
        epoch0, history = st["epoch"], st["history"]
        net.load_state_dict(torch.load(os.path.join(run_dir, f"epoch{epoch0}.pt"),
                                       map_location=device))
        tie(net)
        opt.load_state_dict(st["opt"])
        sched.load_state_dict(st["sched"])
        rng.setstate(st["rng"])
        torch.set_rng_state(st["torch_rng"])
        log(f"# resumed after epoch {epoch0}")
    else:
        log(f"# {args.name}: d2l 10.7 Transformer on byte-pair pieces of the cased corpus")
        log(f"# torch {torch.__version__}, python {platform.python_version()}, "
            f"threads {torch.get_num_threads()}, seed {args.seed}")
        log(f"# corpus {os.path.basename(args.corpus)}: {splits.describe(data)}")
        log(f"# joint vocabulary {len(vocab)} ({len(alphabet)} characters, {len(merges)} merges)")
        log("# hyper-parameters " + json.dumps(hp))
        log(f"# parameters {nparams}, device {device}")
        if init_state is not None and not args.bench:
            by, _ = dev.score(net)
            log(f"# going on from {args.init} ({init_epochs} epochs, schedule from step "
                f"{init_epochs * batches_per_epoch}): dev BLEU-4 {bleu_text(by)}"
                f"{carried_text(net, dev, seg, vocab, hp)}")
    bos, pad_id = vocab['<bos>'], vocab['<pad>']

    def typed(s):  # how an English sentence is typed, drawn anew each time
        s = normalize.casual(s, rng) if args.noise else s
        if args.capitals and rng.random() < args.capitals:
            s = normalize.capitalize_one(s, rng)
        return s

    start = time.time()
    for epoch in range(epoch0 + 1, args.epochs + 1):
        net.train()
        t0, tot, ntok = time.time(), 0.0, 0
        if args.noise or args.capitals:
            src = encode([seg_cached(typed(s)) for s in english], vocab)
        src_e, tgt_e = src, tgt
        # this epoch's digits and names
        extra = [numerals.respell(e, t, rng) for e, t in numbered for _ in range(args.numbers)]
        extra += [names.respell(e, t, rng, titled_p=args.titles)
                  for e, t in named for _ in range(args.names)]
        extra += [p for p in short for _ in range(args.short)]
        if extra:
            src_e = src + encode([seg(typed(e)) for e, _ in extra], vocab)
            tgt_e = tgt + encode([seg(t) for _, t in extra], vocab)
        batches = length_batches([(len(s), len(t)) for s, t in zip(src_e, tgt_e)],
                                 args.max_tokens, rng)
        for bi, b in enumerate(batches):
            X, X_vl = (t.to(device) for t in pad([src_e[i] for i in b], pad_id))
            Y = pad([tgt_e[i] for i in b], pad_id)[0].to(device)
            bos_col = torch.full((len(b), 1), bos, dtype=torch.long, device=device)
            dec_in = torch.cat([bos_col, Y[:, :-1]], 1)
            Y_hat, _ = net(X, dec_in, X_vl)
            n = int((Y != pad_id).sum())
            l = loss_fn(Y_hat.reshape(-1, Y_hat.shape[-1]), Y.reshape(-1))
            optimizer_step(net, opt, sched, l, n)
            tot += float(l)
            ntok += n
            if args.bench and bi == 19:
                dt = time.time() - t0
                print(f"{args.hiddens}/{args.layers}/{args.heads}/{args.ffn}: {nparams} params, "
                      f"{dt / 20:.3f} s/batch, {len(batches)} batches/epoch, "
                      f"~{dt / 20 * len(batches) / 60:.1f} min/epoch")
                return
        by, bleu = dev.score(net)
        history.append((epoch, bleu))
        carried = carried_text(net, dev, seg, vocab, hp)
        log(f"epoch {epoch:3d}, loss {tot / ntok:.4f} (label-smoothed, per token), "
            f"dev BLEU-4 {bleu_text(by)}{carried}, {time.time() - t0:.0f} s, "
            f"lr {sched.get_last_lr()[0]:.2e}")
        torch.save(net.state_dict(), os.path.join(run_dir, f"epoch{epoch}.pt"))
        torch.save(dict(epoch=epoch, history=history, opt=opt.state_dict(),
                        sched=sched.state_dict(), rng=rng.getstate(),
                        torch_rng=torch.get_rng_state()), state_path + ".tmp")
        os.replace(state_path + ".tmp", state_path)
        for old in glob.glob(os.path.join(run_dir, "epoch*.pt")):
            n = int(re.findall(r"epoch(\d+)\.pt$", old)[0])
            if n <= epoch - max(args.average, 1):
                os.remove(old)
        ran = (time.time() - start) / 60
        if ran + (time.time() - t0) / 60 > args.minutes:
            log(f"# pausing after epoch {epoch}: {ran:.1f} min in this run "
                f"(--minutes {args.minutes:g}); run again to go on")
            break


def finish(args, net, vocab, alphabet, merges, seg, dev, hp, log, nparams, examples, device):
    run_dir = os.path.join(args.dir, args.name)
    st = torch.load(os.path.join(run_dir, "state.pt"))
    net.to(device)
    last = st["epoch"]
    best = None
    for k in range(1, args.average + 1):
        paths = [os.path.join(run_dir, f"epoch{e}.pt") for e in range(last - k + 1, last + 1)]
        if not all(os.path.exists(p) for p in paths):
            break
        net.load_state_dict(average(paths))
        tie(net)
        by, b = dev.score(net)
        log(f"# average of epochs {last - k + 1}..{last}: dev BLEU-4 {bleu_text(by)}")
        if best is None or b > best[0]:
            best = (b, k)
    b, k = best
    net.load_state_dict(average([os.path.join(run_dir, f"epoch{e}.pt")
                                 for e in range(last - k + 1, last + 1)]))
    tie(net)
    net.eval()
    log(f"# chosen: average of the last {k} epoch(s) ({last - k + 1}..{last}), "
        f"dev BLEU-4 {100 * b:.2f}{carried_text(net, dev, seg, vocab, hp)}")
    for eng in ["Go.", "I lost.", "He's calm.", "I'm home.", "Where is the station?",
                "I\u2019m home.", "i love you", "where is the station", "hello", "I'm 19.",
                "he is 25 years old", "I have 3 cats.", "Anna is my sister.",
                "my name is Anna", "Where is Oscar?"]:
        ids = encode([seg(normalize.normalize(eng))], vocab)
        log(f"{eng} => {bpe.detokenize(translate_pieces(net, ids, vocab)[0])}")
    config = export.transformer_config(vocab, vocab, args.hiddens, args.layers, args.heads,
                                       args.ffn, NUM_STEPS)
    config["shared_embeddings"] = True
    training = dict(hp, epochs=last, averaged_epochs=k, seed=args.seed, optimizer="adam",
                    grad_clip=1.0, init="xavier_uniform; shared embedding N(0, 1/num_hiddens)",
                    examples=examples, history=[(e, round(100 * x, 2)) for e, x in st["history"]],
                    split="sha1(preprocessed english) % 100: 0-1 dev, 2-5 test, rest train",
                    dev_bleu4=round(100 * b, 2))
    path = os.path.join(args.out, args.name + ".f32.safetensors")
    tokens = export.vocab_tokens(vocab)
    nbytes = export.save_model(net, path, "transformer", config, tokens, tokens, training,
                               tensors=shared_state(net),
                               extra={"attnlite.bpe": json.dumps(
                                   {"end_of_word": bpe.END, "alphabet": alphabet,
                                    "merges": [list(m) for m in merges]}, ensure_ascii=False)})
    log(f"# exported {os.path.relpath(path, ROOT)} ({nbytes} bytes)")
