"""Export a trained d2l model to an attnlite .safetensors file, and load it back.

The file is net.state_dict() (all F32, under the d2l names) plus `__metadata__`:
    attnlite.format    "1"
    attnlite.kind      "transformer" | "bahdanau"
    attnlite.config    JSON of the hyper-parameters (see CONFIG_KEYS)
    attnlite.src_vocab JSON array, idx_to_token of the source vocabulary
    attnlite.tgt_vocab JSON array, idx_to_token of the target vocabulary
    attnlite.license   attribution of the training data
    attnlite.training  JSON: epochs, lr, batch_size, seed, final_loss, examples, ...

    /usr/bin/python3 tools/export.py MODEL.safetensors   # print a summary of a file
"""
import json
import sys
from collections import OrderedDict

from . import d2l
from . import quantize
from . import safetensors as st

FORMAT = "1"
LICENSE = ("Trained on English-French sentence pairs from the Tatoeba project "
           "(tatoeba.org), CC-BY 2.0 FR")
CONFIG_KEYS = {
    "transformer": ["src_vocab_size", "tgt_vocab_size", "num_hiddens", "num_layers",
                    "num_heads", "ffn_num_hiddens", "num_steps", "use_bias", "max_len"],
    "bahdanau": ["src_vocab_size", "tgt_vocab_size", "embed_size", "num_hiddens",
                 "num_layers", "num_steps", "rnn"],
}


def transformer_config(src_vocab, tgt_vocab, num_hiddens, num_layers, num_heads,
                       ffn_num_hiddens, num_steps):
    return OrderedDict([("src_vocab_size", len(src_vocab)),
                        ("tgt_vocab_size", len(tgt_vocab)),
                        ("num_hiddens", num_hiddens), ("num_layers", num_layers),
                        ("num_heads", num_heads), ("ffn_num_hiddens", ffn_num_hiddens),
                        ("num_steps", num_steps), ("use_bias", False), ("max_len", 1000)])


def bahdanau_config(src_vocab, tgt_vocab, embed_size, num_hiddens, num_layers, num_steps):
    return OrderedDict([("src_vocab_size", len(src_vocab)),
                        ("tgt_vocab_size", len(tgt_vocab)),
                        ("embed_size", embed_size), ("num_hiddens", num_hiddens),
                        ("num_layers", num_layers), ("num_steps", num_steps),
                        ("rnn", "gru")])


EMPTY_TOKEN = "<empty>"


def vocab_tokens(vocab):
    """idx_to_token as attnlite stores it. The book's tokenize_nmt splits on single spaces,
    so a double space in the corpus (8 French tokens in the whole fra-eng file) becomes an
    empty token; attnlite's vocabularies hold no empty tokens, so it is named <empty>
    (same index, same weights)."""
    return [EMPTY_TOKEN if t == "" else t for t in vocab.idx_to_token]


def save_model(net, path, kind, config, src_tokens, tgt_tokens, training, license=LICENSE,
               tensors=None, extra=None):
    """Writes net.state_dict() (F32; or the given tensors) and the metadata above, plus the
    `extra` metadata entries; returns the file size."""
    if kind not in CONFIG_KEYS:
        raise ValueError(f"unknown kind {kind!r}")
    missing = [k for k in CONFIG_KEYS[kind] if k not in config]
    if missing:
        raise ValueError(f"config lacks {missing}")
    tensors = OrderedDict((k, v.detach().cpu().float().contiguous())
                          for k, v in (tensors or net.state_dict()).items())
    meta = OrderedDict([
        ("attnlite.format", FORMAT),
        ("attnlite.kind", kind),
        ("attnlite.config", json.dumps(config)),
        ("attnlite.src_vocab", json.dumps(src_tokens, ensure_ascii=False)),
        ("attnlite.tgt_vocab", json.dumps(tgt_tokens, ensure_ascii=False)),
        ("attnlite.license", license),
        ("attnlite.training", json.dumps(training)),
    ])
    meta.update(extra or {})
    return st.save(path, tensors, meta)


def export(net, path, kind, config, src_vocab, tgt_vocab, training):
    """save_model for a trained net and its d2l vocabularies."""
    return save_model(net, path, kind, config, vocab_tokens(src_vocab),
                      vocab_tokens(tgt_vocab), training)


def vocab_from_tokens(idx_to_token):
    """A d2l Vocab whose idx_to_token is exactly the given list."""
    v = d2l.Vocab()
    v.idx_to_token = list(idx_to_token)
    v.token_to_idx = {t: i for i, t in enumerate(v.idx_to_token)}
    return v


def load_model(path, positions_from_cache=False):
    """Rebuild the PyTorch net from an exported file.

    Returns (net in eval mode, src_vocab, tgt_vocab, metadata dict with the JSON
    fields decoded).  Dropout is 0 in the rebuilt net (it is only used for inference).
    """
    tensors, meta = st.load(path)
    tensors = quantize.dequantize(tensors)  # int8 files: the fp32 weights they stand for
    if meta.get("attnlite.format") != FORMAT:
        raise ValueError(f"{path}: not an attnlite format {FORMAT} file")
    kind = meta["attnlite.kind"]
    cfg = json.loads(meta["attnlite.config"])
    src_vocab = vocab_from_tokens(json.loads(meta["attnlite.src_vocab"]))
    tgt_vocab = vocab_from_tokens(json.loads(meta["attnlite.tgt_vocab"]))
    if kind == "transformer":
        net = d2l.make_transformer(cfg["src_vocab_size"], cfg["tgt_vocab_size"],
                                   num_hiddens=cfg["num_hiddens"],
                                   num_layers=cfg["num_layers"], num_heads=cfg["num_heads"],
                                   ffn_num_hiddens=cfg["ffn_num_hiddens"], dropout=0.0,
                                   positions_from_cache=positions_from_cache)
    elif kind == "bahdanau":
        if cfg.get("rnn", "gru") != "gru":
            raise ValueError("only GRU Bahdanau models are supported")
        net = d2l.make_bahdanau(cfg["src_vocab_size"], cfg["tgt_vocab_size"],
                                embed_size=cfg["embed_size"], num_hiddens=cfg["num_hiddens"],
                                num_layers=cfg["num_layers"], dropout=0.0)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if cfg.get("shared_embeddings"):  # one table: source and target embedding, output layer
        shared = tensors["decoder.embedding.weight"]
        tensors = dict(tensors, **{"encoder.embedding.weight": shared,
                                   "decoder.dense.weight": shared})
    net.load_state_dict(tensors, strict=True)
    net.eval()
    info = dict(meta)
    if "attnlite.bpe" in meta:
        info["bpe"] = json.loads(meta["attnlite.bpe"])
    info["config"] = cfg
    info["training"] = json.loads(meta.get("attnlite.training", "{}"))
    return net, src_vocab, tgt_vocab, info


def main():
    for p in sys.argv[1:]:
        net, sv, tv, info = load_model(p)
        n = sum(t.numel() for t in net.state_dict().values())
        print(f"{p}: {info['attnlite.kind']}, {n} parameters, src vocab {len(sv)}, "
              f"tgt vocab {len(tv)}")
        print("  config:", json.dumps(info["config"]))
        print("  training:", json.dumps(info["training"]))
