"""The decoder-only (GPT-style) French language model, its data and its file.

DecoderOnlyLM (exercise 10.7.3): `embedding` (scaled by sqrt(d_model)), `pos_encoding`
(the book's sinusoidal encoding, its table a non-persistent buffer), `layers` (post-LN
nn.TransformerEncoderLayer(batch_first=True) with the additive float causal mask) and
`head` (nn.Linear, not tied).  The data: the unique French sentences of each split of
the translator's split, `<bos> w1 .. wn <eos>`, at most MAX_LEN - 1 words.  The file:
state_dict() under PyTorch's names plus attnlite.format, attnlite.kind "lm",
attnlite.config, attnlite.vocab, attnlite.eval, attnlite.training, attnlite.license.
The docstring of train_lm.py (`tools/train_lm.py --help`) describes all three in full.
"""
import collections
import json
import math

import torch
from torch import nn

from . import d2l
from . import export
from . import quantize
from . import safetensors as st

MAX_LEN = 32          # longest input the model reads (<bos> + 31 words)
POS_MAX_LEN = 5000
RESERVED = ['<pad>', '<bos>', '<eos>']
LICENSE = ("Trained on the French sentences of English-French pairs from the Tatoeba "
           "project (tatoeba.org), CC-BY 2.0 FR")


class PositionalEncoding(d2l.PositionalEncoding):
    """The book's sinusoidal positional encoding, its table P a non-persistent buffer
    (it follows the module to a device and stays out of state_dict())."""

    def __init__(self, d_model, dropout, max_len=POS_MAX_LEN):
        super().__init__(d_model, dropout, max_len)
        P = self.P
        del self.P
        self.register_buffer("P", P, persistent=False)


def causal_mask(n, device=None):
    """(n, n) float mask: 0 on and below the diagonal, -inf above (added to scores)."""
    return torch.triu(torch.full((n, n), float("-inf"), device=device), diagonal=1)


class DecoderOnlyLM(nn.Module):
    def __init__(self, vocab_size, d_model=128, num_heads=4, num_layers=3,
                 dim_feedforward=512, dropout=0.1, activation="relu", norm_first=False,
                 layer_norm_eps=1e-5):
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.pos_encoding = PositionalEncoding(d_model, dropout)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, num_heads, dim_feedforward, dropout,
                                       activation, layer_norm_eps=layer_norm_eps,
                                       batch_first=True, norm_first=norm_first)
            for _ in range(num_layers)])
        self.head = nn.Linear(d_model, vocab_size)
        # N(0, 1/d): the embedding times sqrt(d) has unit-variance entries, the scale of
        # the positional encoding (the default N(0, 1) would be sqrt(d) times larger).
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5)

    def forward(self, X):
        """X: (batch, steps) token ids -> (batch, steps, vocab) next-token logits."""
        H = self.pos_encoding(self.embedding(X) * math.sqrt(self.d_model))
        mask = causal_mask(X.shape[1], X.device)
        for layer in self.layers:
            H = layer(H, src_mask=mask)
        return self.head(H)


def lm_config(vocab_size, hp):
    """attnlite.config of a model with the hyper-parameters hp (d_model, num_heads,
    num_layers, dim_feedforward, activation)."""
    return collections.OrderedDict([
        ("vocab_size", vocab_size), ("d_model", hp["d_model"]),
        ("num_heads", hp["num_heads"]), ("num_layers", hp["num_layers"]),
        ("dim_feedforward", hp["dim_feedforward"]), ("activation", hp["activation"]),
        ("norm_first", False), ("layer_norm_eps", 1e-5), ("bias", True),
        ("max_len", MAX_LEN), ("pos_max_len", POS_MAX_LEN)])


def build(cfg, dropout=0.0):
    return DecoderOnlyLM(cfg["vocab_size"], cfg["d_model"], cfg["num_heads"],
                         cfg["num_layers"], cfg["dim_feedforward"], dropout,
                         cfg["activation"], cfg["norm_first"], cfg["layer_norm_eps"])


def save_lm(net, path, cfg, vocab, evaluation, training):
    """Writes net.state_dict() (F32) and the metadata above; returns the file size."""
    tensors = collections.OrderedDict((k, v.detach().cpu().float().contiguous())
                                      for k, v in net.state_dict().items())
    meta = collections.OrderedDict([
        ("attnlite.format", export.FORMAT),
        ("attnlite.kind", "lm"),
        ("attnlite.config", json.dumps(cfg)),
        ("attnlite.vocab", json.dumps(export.vocab_tokens(vocab), ensure_ascii=False)),
        ("attnlite.eval", json.dumps(evaluation)),
        ("attnlite.license", LICENSE),
        ("attnlite.training", json.dumps(training)),
    ])
    return st.save(path, tensors, meta)


def load_lm(path):
    """(net in eval mode, vocab, metadata with config/eval/training decoded); int8 files
    are dequantized. The <empty> token (see export.vocab_tokens) maps back to ''."""
    tensors, meta = st.load(path)
    tensors = quantize.dequantize(tensors)
    if meta.get("attnlite.kind") != "lm":
        raise ValueError(f"{path}: not an attnlite lm file")
    cfg = json.loads(meta["attnlite.config"])
    toks = ["" if t == export.EMPTY_TOKEN else t for t in json.loads(meta["attnlite.vocab"])]
    vocab = export.vocab_from_tokens(toks)
    net = build(cfg)
    net.load_state_dict(tensors, strict=True)
    net.eval()
    info = dict(meta)
    for k in ("config", "eval", "training"):
        info[k] = json.loads(meta.get("attnlite." + k, "{}"))
    return net, vocab, info


def french_sentences(pairs):
    """Unique French token lists of a split, in corpus order."""
    seen, out = set(), []
    for _, t in pairs:
        k = ' '.join(t)
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out


def encode(sents, vocab):
    """[<bos> w1 .. wn <eos>] id lists; sentences whose input would pass MAX_LEN are
    dropped. Returns (encoded, number dropped)."""
    bos, eos = vocab['<bos>'], vocab['<eos>']
    out = [[bos] + vocab[s] + [eos] for s in sents if len(s) + 1 <= MAX_LEN]
    return out, len(sents) - len(out)


def french_splits(data):
    """{'train'|'dev'|'test': unique French token lists} of splits.load's pairs."""
    return {k: french_sentences(data[k]) for k in ('train', 'dev', 'test')}


def unseen(fr, k):
    """The sentences of held-out split k that are not in the training split."""
    train_set = {' '.join(s) for s in fr['train']}
    return [s for s in fr[k] if ' '.join(s) not in train_set]


def make_vocab(fr):
    """min_freq 2 on the training split; '<unk>', '<pad>', '<bos>', '<eos>' = 0..3."""
    return d2l.Vocab(fr['train'], min_freq=2, reserved_tokens=RESERVED)
