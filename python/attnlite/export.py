"""attnlite.export: a PyTorch model built with the book's code, written as an attnlite model
file (safetensors) that :meth:`attnlite.Model.load` reads.

Four kinds of nets are accepted, each recognised by its classes (subclasses work too) and
checked tensor by tensor against the layout the C library binds:

* ``"transformer"``: the book's Transformer (d2l.ai v0.17, 10.7),
  ``d2l.EncoderDecoder(TransformerEncoder, TransformerDecoder)``;
* ``"bahdanau"``: the book's seq2seq with Bahdanau attention (10.4),
  ``d2l.EncoderDecoder(Seq2SeqEncoder, Seq2SeqAttentionDecoder)`` with GRUs;
* ``"lm"``: the decoder-only language model ``DecoderOnlyLM`` (``tools/attnlite_tools/lm.py``:
  ``embedding``, a sinusoidal ``pos_encoding``, ``layers`` of ``nn.TransformerEncoderLayer``,
  ``head``);
* ``"vit"``: the Vision Transformer ``VisionTransformer`` (``tools/attnlite_tools/vit.py``:
  ``patch_embedding``, ``cls_token``, ``pos_embedding``, an ``nn.TransformerEncoder``,
  ``mlp_head``).

The file is the net's ``state_dict()`` in float32 (or, with ``int8=True``, every linear
weight and embedding table as int8 with one float32 scale per output row), under the
PyTorch names, plus ``__metadata__``: ``attnlite.format`` ``"1"``, ``attnlite.kind``,
``attnlite.config`` (the hyper-parameters, derived from the net), the vocabularies
(``attnlite.src_vocab`` and ``attnlite.tgt_vocab``, or ``attnlite.vocab``) or the class
labels (``attnlite.labels``), then what ``**info`` adds. It is byte for byte what the
project's training scripts write for the same net.

PyTorch is imported by :func:`export` only; importing :mod:`attnlite` does not need it.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = ["export"]

FORMAT = "1"
EMPTY_TOKEN = "<empty>"
QUANTIZATION = "int8 symmetric per output channel: <name>.weight I8, <name>.weight_scale F32"
# The Vision Transformer's patch kernel (D, C, p, p): quantized per output channel like a
# (D, C*p*p) matrix, keeping its shape.
_CONV_KERNELS = ("patch_embedding.projection.0.weight",)
# The language model's context when the net does not say: the lab's MAX_LEN.
LM_CONTEXT = 32
_RESERVED_INFO = ("format", "kind", "config", "src_vocab", "tgt_vocab", "vocab", "labels",
                  "quantization", "bpe")

PathLike = Union[str, "os.PathLike[str]"]
Vocab = Any
"""A vocabulary: the book's ``d2l.Vocab`` (anything with an ``idx_to_token`` list; a
``token_to_idx`` dict, when present, must agree with it) or a plain list of tokens."""
Shapes = Dict[str, Tuple[int, ...]]


# ---- safetensors ---------------------------------------------------------------------------

_DTYPE_NAMES = {"<f4": "F32", "|i1": "I8"}


def _safetensors_bytes(tensors: "Mapping[str, Any]", metadata: Mapping[str, str]) -> bytes:
    """The bytes of a safetensors file: u64 little-endian header length N, N bytes of JSON
    (``__metadata__`` first, then each tensor's dtype, shape and data offsets, padded with
    spaces to a multiple of 8 with the length field), then the tensors' raw little-endian
    bytes back to back. ``tensors`` maps names to NumPy float32 or int8 arrays."""
    import numpy as np

    header: Dict[str, Any] = OrderedDict()
    if metadata:
        header["__metadata__"] = OrderedDict(metadata)
    blobs = []
    offset = 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        if a.dtype == np.float32:
            a = a.astype("<f4", copy=False)
        dtype = _DTYPE_NAMES.get(a.dtype.str)
        if dtype is None:  # pragma: no cover - only float32 and int8 are written
            raise TypeError(f"{name}: cannot write dtype {a.dtype}")
        raw = a.tobytes(order="C")
        header[name] = OrderedDict([("dtype", dtype), ("shape", [int(s) for s in a.shape]),
                                    ("data_offsets", [offset, offset + len(raw)])])
        blobs.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    hjson += b" " * ((-(8 + len(hjson))) % 8)
    return struct.pack("<Q", len(hjson)) + hjson + b"".join(blobs)


# ---- int8 ----------------------------------------------------------------------------------

def _quantizable(name: str, a: Any) -> bool:
    """Linear weights and embedding tables (2-D ``.weight`` / ``.in_proj_weight``, not a
    GRU's), and the ViT's 4-D patch kernel."""
    if name in _CONV_KERNELS:
        return a.ndim == 4
    return ((name.endswith(".weight") or name.endswith(".in_proj_weight"))
            and a.ndim == 2 and ".rnn." not in name)


def _quantize(tensors: "Mapping[str, Any]") -> "OrderedDict[str, Any]":
    """Per-output-channel symmetric int8: ``<name>`` I8 ``q = round(w / scale)`` in
    [-127, 127] and ``<name>_scale`` F32 ``scale = max |w[row]| / 127`` (0 for a zero row),
    so that ``w ~ scale[:, None] * q``; every other tensor unchanged."""
    import numpy as np

    out: "OrderedDict[str, Any]" = OrderedDict()
    for name, w in tensors.items():
        if not _quantizable(name, w):
            out[name] = w
            continue
        flat = w.reshape(w.shape[0], -1)
        scale = (np.abs(flat).max(axis=1) / np.float32(127.0)).astype(np.float32)
        safe = np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)
        q = np.clip(np.round(flat / safe[:, None]), -127, 127).astype(np.int8)
        out[name] = q.reshape(w.shape)
        out[name + "_scale"] = scale
    return out


# ---- vocabularies --------------------------------------------------------------------------

def _vocab_tokens(vocab: Vocab, what: str, size: int) -> List[str]:
    """idx_to_token as the file stores it (the book's empty token, from a double space in the
    corpus, named ``<empty>``), checked as the C library checks a vocabulary."""
    if isinstance(vocab, (list, tuple)):
        tokens = list(vocab)
    elif hasattr(vocab, "idx_to_token"):
        tokens = list(vocab.idx_to_token)
        t2i = getattr(vocab, "token_to_idx", None)
        if isinstance(t2i, Mapping):
            for i, t in enumerate(tokens):
                if t2i.get(t) != i:
                    raise ValueError(f"{what}: token_to_idx[{t!r}] is {t2i.get(t)!r}, but "
                                     f"idx_to_token[{i}] is {t!r}")
    else:
        raise TypeError(f"{what} must be a d2l Vocab (with idx_to_token) or a list of tokens, "
                        f"not {type(vocab).__name__}")
    for t in tokens:
        if not isinstance(t, str):
            raise ValueError(f"{what}: token {t!r} is not a str")
    if len(tokens) != size:
        raise ValueError(f"{what} has {len(tokens)} tokens but the net's embedding has {size} "
                         f"rows: export the vocabulary the net was built with")
    tokens = [EMPTY_TOKEN if t == "" else t for t in tokens]
    for t in tokens:
        if " " in t or "\0" in t:
            raise ValueError(f"{what}: token {t!r} contains a space or a NUL")
    if len(set(tokens)) != len(tokens):
        seen = set()
        dup = next(t for t in tokens if t in seen or seen.add(t))
        raise ValueError(f"{what}: token {dup!r} appears twice")
    if not tokens or tokens[0] != "<unk>":
        raise ValueError(f"{what} must start with '<unk>' (the book's Vocab does)")
    for t in ("<pad>", "<bos>", "<eos>"):
        if t not in tokens:
            raise ValueError(f"{what} lacks the reserved token {t!r} (the book's "
                             f"reserved_tokens=['<pad>', '<bos>', '<eos>'])")
    return tokens


# ---- recognising and checking the nets ----------------------------------------------------

def _is(obj: Any, *names: str) -> bool:
    """obj's class, or one of its bases, has one of these names."""
    return any(c.__name__ in names for c in type(obj).__mro__)


def _kind_of(net: Any) -> str:
    import torch

    if not isinstance(net, torch.nn.Module):
        raise ValueError(f"attnlite.export needs a torch.nn.Module, not {type(net).__name__}")
    enc, dec = getattr(net, "encoder", None), getattr(net, "decoder", None)
    if enc is not None and dec is not None:
        if _is(enc, "TransformerEncoder") and _is(dec, "TransformerDecoder"):
            if not (hasattr(enc, "blks") and hasattr(dec, "blks")):
                raise ValueError("the encoder and decoder are not the book's TransformerEncoder "
                                 "and TransformerDecoder (d2l 10.7: blks of EncoderBlock / "
                                 "DecoderBlock)")
            return "transformer"
        if _is(dec, "Seq2SeqAttentionDecoder") or _is(enc, "Seq2SeqEncoder", "Seq2SeqLSTMEncoder"):
            rnns = [getattr(m, "rnn", None) for m in (enc, dec)]
            if any(isinstance(r, torch.nn.LSTM) for r in rnns):
                raise ValueError("only GRU Bahdanau models can be exported (the book's "
                                 "Seq2SeqEncoder and Seq2SeqAttentionDecoder): this one has "
                                 "an LSTM")
            if not all(isinstance(r, torch.nn.GRU) for r in rnns):
                raise ValueError("a Bahdanau model needs the book's Seq2SeqEncoder and "
                                 "Seq2SeqAttentionDecoder, each with an nn.GRU `rnn`")
            if not (_is(enc, "Seq2SeqEncoder") and _is(dec, "Seq2SeqAttentionDecoder")):
                raise ValueError(f"a Bahdanau model needs the book's Seq2SeqEncoder and "
                                 f"Seq2SeqAttentionDecoder, not {type(enc).__name__} and "
                                 f"{type(dec).__name__}")
            return "bahdanau"
    if _is(net, "DecoderOnlyLM"):
        return "lm"
    if _is(net, "VisionTransformer"):
        return "vit"
    raise ValueError(
        f"attnlite.export does not know a {type(net).__name__}: it exports the book's "
        f"d2l.EncoderDecoder(TransformerEncoder, TransformerDecoder) and "
        f"d2l.EncoderDecoder(Seq2SeqEncoder, Seq2SeqAttentionDecoder) (GRU), the language "
        f"model DecoderOnlyLM and the VisionTransformer")


def _check_shapes(kind: str, got: Shapes, want: Shapes, optional: Sequence[str] = ()) -> None:
    """ValueError unless the state dict has exactly the tensors the C library binds."""
    missing = [k for k in want if k not in got and k not in optional]
    extra = [k for k in got if k not in want]
    wrong = [f"{k} {list(got[k])} (expected {list(want[k])})" for k in want
             if k in got and tuple(got[k]) != tuple(want[k])]
    if missing or extra or wrong:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing[:4]) + (" ..." if len(missing) > 4 else ""))
        if extra:
            parts.append("unexpected " + ", ".join(extra[:4]) + (" ..." if len(extra) > 4 else ""))
        if wrong:
            parts.append("shape of " + "; ".join(wrong[:4]) + (" ..." if len(wrong) > 4 else ""))
        raise ValueError(f"the net's state_dict() is not that of a {kind} attnlite can run: "
                         + "; ".join(parts))


def _linear(out: Shapes, prefix: str, n_in: int, n_out: int, bias: bool = True) -> None:
    out[prefix + ".weight"] = (n_out, n_in)
    if bias:
        out[prefix + ".bias"] = (n_out,)


def _norm(out: Shapes, prefix: str, n: int) -> None:
    out[prefix + ".weight"] = (n,)
    out[prefix + ".bias"] = (n,)


def _mha(out: Shapes, prefix: str, h: int, bias: bool) -> None:
    for w in ("W_q", "W_k", "W_v", "W_o"):
        _linear(out, f"{prefix}.{w}", h, h, bias)


def _torch_layer(out: Shapes, prefix: str, d: int, f: int) -> None:
    """nn.TransformerEncoderLayer's tensors."""
    out[prefix + "self_attn.in_proj_weight"] = (3 * d, d)
    out[prefix + "self_attn.in_proj_bias"] = (3 * d,)
    _linear(out, prefix + "self_attn.out_proj", d, d)
    _linear(out, prefix + "linear1", d, f)
    _linear(out, prefix + "linear2", f, d)
    _norm(out, prefix + "norm1", d)
    _norm(out, prefix + "norm2", d)


def _table_rows(pos_encoding: Any, what: str) -> int:
    P = getattr(pos_encoding, "P", None)
    if P is None or getattr(P, "dim", lambda: 0)() != 3:
        raise ValueError(f"{what}: no sinusoidal positional encoding table P (1, max_len, D)")
    return int(P.shape[1])


def _steps(num_steps: Any, what: str, lo: int, hi: int) -> int:
    if not isinstance(num_steps, int) or isinstance(num_steps, bool):
        raise TypeError(f"num_steps must be an int, not {type(num_steps).__name__}")
    if not lo <= num_steps <= hi:
        raise ValueError(f"num_steps ({what}) must be in [{lo}, {hi}], not {num_steps}")
    return num_steps


def _translator_steps(net: Any, num_steps: Optional[int], hi: int) -> int:
    """A translator's num_steps: the given one, else the net's attribute, checked in [1, hi]."""
    if num_steps is None:
        num_steps = getattr(net, "num_steps", None)
    if num_steps is None:
        raise ValueError("num_steps is required for a translator: the book's num_steps "
                         "(load_data_nmt and predict_seq2seq; 10 in the book), the source "
                         "length the model reads and the longest translation")
    return _steps(num_steps, "the source length", 1, hi)


def _transformer_config(net: Any, got: Shapes, num_steps: Optional[int]) -> "OrderedDict[str, Any]":
    enc, dec = net.encoder, net.decoder
    if len(enc.blks) == 0:
        raise ValueError("a Transformer needs at least one block")
    blk = enc.blks[0]
    h = int(enc.embedding.embedding_dim)
    cfg = OrderedDict([
        ("src_vocab_size", int(enc.embedding.num_embeddings)),
        ("tgt_vocab_size", int(dec.embedding.num_embeddings)),
        ("num_hiddens", h), ("num_layers", len(enc.blks)),
        ("num_heads", int(blk.attention.num_heads)),
        ("ffn_num_hiddens", int(blk.ffn.dense1.out_features)),
        ("num_steps", None),
        ("use_bias", blk.attention.W_q.bias is not None),
        ("max_len", _table_rows(enc.pos_encoding, "the encoder")),
    ])
    if len(dec.blks) != cfg["num_layers"]:
        raise ValueError(f"the encoder has {cfg['num_layers']} blocks and the decoder "
                         f"{len(dec.blks)}: attnlite needs as many")
    if _table_rows(dec.pos_encoding, "the decoder") != cfg["max_len"]:
        raise ValueError("the encoder's and the decoder's positional encodings differ in length")
    attentions = [b.attention for b in enc.blks]
    attentions += [a for b in dec.blks for a in (b.attention1, b.attention2)]
    for att in attentions:
        if int(att.num_heads) != cfg["num_heads"]:
            raise ValueError("every multi-head attention needs the same number of heads")
    if h % cfg["num_heads"]:
        raise ValueError(f"num_hiddens {h} is not a multiple of num_heads {cfg['num_heads']}")
    if h % 2:
        raise ValueError(f"num_hiddens {h} must be even (the sinusoidal positional encoding)")
    cfg["num_steps"] = _translator_steps(net, num_steps, min(1000, cfg["max_len"]))
    H, F, bias = h, cfg["ffn_num_hiddens"], cfg["use_bias"]
    want: Shapes = OrderedDict()
    want["encoder.embedding.weight"] = (cfg["src_vocab_size"], H)
    for i in range(cfg["num_layers"]):
        p = f"encoder.blks.block{i}."
        _mha(want, p + "attention", H, bias)
        _norm(want, p + "addnorm1.ln", H)
        _linear(want, p + "ffn.dense1", H, F)
        _linear(want, p + "ffn.dense2", F, H)
        _norm(want, p + "addnorm2.ln", H)
    want["decoder.embedding.weight"] = (cfg["tgt_vocab_size"], H)
    for i in range(cfg["num_layers"]):
        p = f"decoder.blks.block{i}."
        _mha(want, p + "attention1", H, bias)
        _norm(want, p + "addnorm1.ln", H)
        _mha(want, p + "attention2", H, bias)
        _norm(want, p + "addnorm2.ln", H)
        _linear(want, p + "ffn.dense1", H, F)
        _linear(want, p + "ffn.dense2", F, H)
        _norm(want, p + "addnorm3.ln", H)
    _linear(want, "decoder.dense", H, cfg["tgt_vocab_size"])
    _check_shapes("book Transformer" + (" with use_bias" if bias else ""), got, want)
    return cfg


def _gru_shapes(out: Shapes, prefix: str, n_in: int, h: int, layers: int) -> None:
    for k in range(layers):
        out[f"{prefix}.weight_ih_l{k}"] = (3 * h, n_in if k == 0 else h)
        out[f"{prefix}.weight_hh_l{k}"] = (3 * h, h)
        out[f"{prefix}.bias_ih_l{k}"] = (3 * h,)
        out[f"{prefix}.bias_hh_l{k}"] = (3 * h,)


def _bahdanau_config(net: Any, got: Shapes, num_steps: Optional[int]) -> "OrderedDict[str, Any]":
    enc, dec = net.encoder, net.decoder
    for name, rnn in (("encoder", enc.rnn), ("decoder", dec.rnn)):
        if rnn.bidirectional or rnn.batch_first or not rnn.bias or getattr(rnn, "proj_size", 0):
            raise ValueError(f"the {name}'s GRU must be the book's: one direction, time-major, "
                             f"with biases")
    cfg = OrderedDict([
        ("src_vocab_size", int(enc.embedding.num_embeddings)),
        ("tgt_vocab_size", int(dec.embedding.num_embeddings)),
        ("embed_size", int(enc.embedding.embedding_dim)),
        ("num_hiddens", int(enc.rnn.hidden_size)),
        ("num_layers", int(enc.rnn.num_layers)),
        ("num_steps", None),
        ("rnn", "gru"),
    ])
    if int(dec.rnn.num_layers) != cfg["num_layers"]:
        raise ValueError(f"the encoder's GRU has {cfg['num_layers']} layers and the decoder's "
                         f"{dec.rnn.num_layers}: attnlite needs as many")
    cfg["num_steps"] = _translator_steps(net, num_steps, 1000)
    E, H, L = cfg["embed_size"], cfg["num_hiddens"], cfg["num_layers"]
    want: Shapes = OrderedDict()
    want["encoder.embedding.weight"] = (cfg["src_vocab_size"], E)
    _gru_shapes(want, "encoder.rnn", E, H, L)
    _linear(want, "decoder.attention.W_k", H, H, False)
    _linear(want, "decoder.attention.W_q", H, H, False)
    _linear(want, "decoder.attention.w_v", H, 1, False)
    want["decoder.embedding.weight"] = (cfg["tgt_vocab_size"], E)
    _gru_shapes(want, "decoder.rnn", E + H, H, L)
    _linear(want, "decoder.dense", H, cfg["tgt_vocab_size"])
    _check_shapes("book Bahdanau seq2seq (GRU)", got, want)
    return cfg


def _activation(layer: Any, what: str) -> str:
    import torch
    import torch.nn.functional as F

    a = layer.activation
    if a is F.relu or isinstance(a, torch.nn.ReLU):
        return "relu"
    exact = getattr(a, "approximate", "none") == "none"
    if a is F.gelu or (isinstance(a, torch.nn.GELU) and exact):
        return "gelu"
    raise ValueError(f"{what}: activation {a!r} (attnlite runs relu and exact gelu)")


def _layer_options(layers: Sequence[Any], what: str) -> Tuple[int, int, str, bool, float]:
    """(num_heads, dim_feedforward, activation, norm_first, layer_norm_eps) shared by every
    nn.TransformerEncoderLayer."""
    import torch

    opts = None
    for i, layer in enumerate(layers):
        w = f"{what} {i}"
        if not isinstance(layer, torch.nn.TransformerEncoderLayer):
            raise ValueError(f"{w} is a {type(layer).__name__}, not an nn.TransformerEncoderLayer")
        att = layer.self_attn
        if getattr(att, "add_zero_attn", False) or getattr(att, "bias_k", None) is not None:
            raise ValueError(f"{w}: add_zero_attn and add_bias_kv are not supported")
        eps = float(layer.norm1.eps)
        if float(layer.norm2.eps) != eps:
            raise ValueError(f"{w}: norm1 and norm2 have different eps")
        o = (int(att.num_heads), int(layer.linear1.out_features), _activation(layer, w),
             bool(getattr(layer, "norm_first", False)), eps)
        if opts is not None and o != opts:
            raise ValueError(f"{what}s differ (heads, feed-forward width, activation, norm_first "
                             f"or eps): attnlite needs them alike")
        opts = o
    if opts is None:
        raise ValueError(f"the net has no {what}")
    return opts


def _lm_config(net: Any, got: Shapes, num_steps: Optional[int]) -> "OrderedDict[str, Any]":
    heads, ffn, act, norm_first, eps = _layer_options(list(net.layers), "layer")
    d = int(net.embedding.embedding_dim)
    v = int(net.embedding.num_embeddings)
    pos_max_len = _table_rows(net.pos_encoding, "the language model")
    if num_steps is None:
        num_steps = getattr(net, "max_len", None) or LM_CONTEXT
    context = _steps(num_steps, "the context: <bos> and the words", 2, min(4096, pos_max_len))
    if d % heads:
        raise ValueError(f"d_model {d} is not a multiple of num_heads {heads}")
    if d % 2:
        raise ValueError(f"d_model {d} must be even (the sinusoidal positional encoding)")
    cfg = OrderedDict([
        ("vocab_size", v), ("d_model", d), ("num_heads", heads),
        ("num_layers", len(net.layers)), ("dim_feedforward", ffn), ("activation", act),
        ("norm_first", norm_first), ("layer_norm_eps", eps), ("bias", True),
        ("max_len", context), ("pos_max_len", pos_max_len)])
    want: Shapes = OrderedDict()
    want["embedding.weight"] = (v, d)
    for i in range(len(net.layers)):
        _torch_layer(want, f"layers.{i}.", d, ffn)
    _linear(want, "head", d, v)
    _check_shapes("DecoderOnlyLM", got, want, optional=("head.bias",))
    return cfg


def _vit_config(net: Any, got: Shapes, input_scale: float) -> "OrderedDict[str, Any]":
    import torch

    enc = net.transformer_encoder
    if not isinstance(enc, torch.nn.TransformerEncoder):
        raise ValueError("transformer_encoder must be an nn.TransformerEncoder")
    heads, ffn, act, norm_first, eps = _layer_options(list(enc.layers), "encoder layer")
    conv = net.patch_embedding.projection[0]
    if not isinstance(conv, torch.nn.Conv2d):
        raise ValueError("patch_embedding.projection[0] must be an nn.Conv2d")
    p = int(conv.kernel_size[0])
    if (tuple(conv.kernel_size) != (p, p) or tuple(conv.stride) != (p, p)
            or tuple(conv.padding) != (0, 0) or tuple(conv.dilation) != (1, 1) or conv.groups != 1):
        raise ValueError("the patch embedding must be a Conv2d with kernel_size = stride = "
                         "patch_size, no padding, dilation or groups")
    n = int(net.pos_embedding.shape[1]) - 1
    image_size = getattr(net.patch_embedding, "image_size", None)
    if image_size is None:
        g = math.isqrt(max(n, 0))
        if g * g != n:
            raise ValueError(f"pos_embedding has {n} patch positions: not a square grid")
        image_size = g * p
    image_size = int(image_size)
    if (image_size // p) ** 2 != n:
        raise ValueError(f"pos_embedding has {n} patch positions; {image_size}x{image_size} "
                         f"images in {p}x{p} patches have {(image_size // p) ** 2}")
    head_norm, head = net.mlp_head[0], net.mlp_head[1]
    if float(head_norm.eps) != eps:
        raise ValueError("mlp_head's LayerNorm and the encoder layers' have different eps")
    if isinstance(input_scale, bool) or not isinstance(input_scale, (int, float)) \
            or not math.isfinite(input_scale) or input_scale <= 0:
        raise ValueError(f"input_scale must be a number > 0, not {input_scale!r}")
    d = int(conv.out_channels)
    cfg = OrderedDict([
        ("image_size", image_size), ("patch_size", p), ("in_channels", int(conv.in_channels)),
        ("num_classes", int(head.out_features)), ("embed_dim", d), ("depth", len(enc.layers)),
        ("num_heads", heads), ("dim_feedforward", ffn), ("activation", act),
        ("norm_first", norm_first), ("layer_norm_eps", eps), ("input_scale", input_scale),
        ("invert", False)])
    if d % heads:
        raise ValueError(f"embed_dim {d} is not a multiple of num_heads {heads}")
    want: Shapes = OrderedDict()
    want["cls_token"] = (1, 1, d)
    want["pos_embedding"] = (1, n + 1, d)
    want["patch_embedding.projection.0.weight"] = (d, cfg["in_channels"], p, p)
    want["patch_embedding.projection.0.bias"] = (d,)
    for i in range(len(enc.layers)):
        _torch_layer(want, f"transformer_encoder.layers.{i}.", d, ffn)
    _norm(want, "mlp_head.0", d)
    _linear(want, "mlp_head.1", d, cfg["num_classes"])
    _check_shapes("VisionTransformer", got, want)
    return cfg


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# ---- export --------------------------------------------------------------------------------

def export(net: Any, *args: Any, path: Optional[PathLike] = None,
           src_vocab: Optional[Vocab] = None, tgt_vocab: Optional[Vocab] = None,
           vocab: Optional[Vocab] = None, labels: Optional[Sequence[str]] = None,
           int8: bool = False, num_steps: Optional[int] = None, input_scale: float = 1.0,
           **info: Any) -> int:
    """Writes a PyTorch net as an attnlite model file; returns the file's size in bytes.

    Translators (the book's Transformer, or its GRU seq2seq with Bahdanau attention)::

        attnlite.export(net, src_vocab, tgt_vocab, "mine.safetensors", num_steps=10)

    the language model (``DecoderOnlyLM``) and the Vision Transformer (``VisionTransformer``)::

        attnlite.export(lm_net, "lm.safetensors", vocab=vocab)
        attnlite.export(vit_net, "vit.safetensors", labels=[str(d) for d in range(10)],
                        input_scale=1 / 16)

    then ``attnlite.Model.load("mine.safetensors")``. The hyper-parameters (``num_hiddens``,
    ``num_layers``, ``num_heads``, ``ffn_num_hiddens``, ``embed_size``, vocabulary sizes,
    activation, ...) come from the net; its ``state_dict()`` is checked tensor by tensor
    against what the C library binds. The file is written next to ``path`` and renamed onto
    it, so a model loaded from an earlier file stays intact.

    Args:
        net: the trained ``torch.nn.Module`` (its mode does not matter: only the weights are
            written; dropout is not part of the file).
        src_vocab, tgt_vocab: a translator's vocabularies: the book's ``d2l.Vocab`` objects
            (anything with an ``idx_to_token`` list) or token lists. Each must match its
            embedding's size, start with ``<unk>`` and hold ``<pad>``, ``<bos>`` and ``<eos>``.
            The book's empty token (a double space in the corpus) is stored as ``<empty>``.
        path: the file to write (positional: after the vocabularies, or right after ``net``
            for a language model or a ViT).
        vocab: the language model's vocabulary (same rules).
        labels: the ViT's class names, one per class.
        int8: store every linear weight and embedding table (and the ViT's patch kernel) as
            int8 with one float32 scale per output row (``<name>_scale``); GRU weights, biases
            and LayerNorms stay float32. About 4x smaller, the same kernels' int8 path.
        num_steps: a translator's ``num_steps`` as in the book's ``load_data_nmt`` and
            ``predict_seq2seq`` (the source length it reads, and the longest translation);
            required unless the net has a ``num_steps`` attribute. For a language model, its
            context: the positions it reads, ``<bos>`` and the words (default: the net's
            ``max_len`` attribute, else 32 as the project's ``lm-fra``). Not for a ViT.
        input_scale: a ViT's input is ``pixel * input_scale`` (digits 0..16 with 1/16: the
            model sees 0..1). ViT only.
        **info: more metadata: ``license`` (a str: where the training data came from),
            ``training`` and ``eval`` (dicts, stored as JSON: the training run, the scores),
            any other ``name=value`` as ``attnlite.name`` (a str as is, anything else as
            JSON).

    Raises:
        ValueError: a net that is not one of the four kinds (or differs from them: an LSTM
            seq2seq, unlike layers, a missing or extra tensor), vocabularies or labels that
            do not fit it, ``num_steps`` missing for a translator, a reserved metadata name.
        TypeError: arguments of the wrong type.
        ImportError: PyTorch is not installed.
    """
    kind = _kind_of(net)  # imports PyTorch: the one place the package needs it
    translator = kind in ("transformer", "bahdanau")
    args = list(args)
    if translator:
        if len(args) > 3:
            raise TypeError("export(net, src_vocab, tgt_vocab, path): too many arguments")
        names = ["src_vocab", "tgt_vocab", "path"]
        given = {"src_vocab": src_vocab, "tgt_vocab": tgt_vocab, "path": path}
    else:
        if len(args) > 1:
            raise TypeError(f"export(net, path, {'vocab' if kind == 'lm' else 'labels'}=...): "
                            f"a {kind} takes its path only as a positional argument")
        names = ["path"]
        given = {"path": path}
    for name, value in zip(names, args):
        if given[name] is not None:
            raise TypeError(f"export() got {name} twice")
        given[name] = value
    missing = [n for n in names if given[n] is None]
    if missing:
        raise TypeError(f"export() of a {kind} needs {', '.join(missing)}")
    path = given["path"]
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if not translator and (src_vocab is not None or tgt_vocab is not None):
        raise ValueError(f"a {kind} has no src_vocab/tgt_vocab: use "
                         f"{'vocab=' if kind == 'lm' else 'labels='}")
    if kind != "lm" and vocab is not None:
        raise ValueError(f"vocab= is a language model's; a {kind} takes "
                         f"{'src_vocab, tgt_vocab' if translator else 'labels='}")
    if kind != "vit" and labels is not None:
        raise ValueError(f"labels= is a ViT's, not a {kind}'s")
    if kind == "vit" and num_steps is not None:
        raise ValueError("num_steps is a translator's or a language model's, not a ViT's")
    if kind != "vit" and input_scale != 1.0:
        raise ValueError(f"input_scale is a ViT's, not a {kind}'s")
    if kind == "lm" and vocab is None:
        raise TypeError("export() of a language model needs vocab=")
    if kind == "vit" and labels is None:
        raise TypeError("export() of a ViT needs labels= (one name per class)")
    for k in info:
        if k in _RESERVED_INFO:
            raise ValueError(f"attnlite.{k} is written by export itself; it cannot be given")
    if "license" in info and not isinstance(info["license"], str):
        raise TypeError("license must be a str")

    state = net.state_dict()
    got: Shapes = OrderedDict((k, tuple(v.shape)) for k, v in state.items())
    meta: "OrderedDict[str, str]" = OrderedDict([("attnlite.format", FORMAT),
                                                 ("attnlite.kind", kind)])
    if kind == "transformer":
        cfg = _transformer_config(net, got, num_steps)
    elif kind == "bahdanau":
        cfg = _bahdanau_config(net, got, num_steps)
    elif kind == "lm":
        cfg = _lm_config(net, got, num_steps)
    else:
        cfg = _vit_config(net, got, input_scale)
    meta["attnlite.config"] = json.dumps(cfg)
    if translator:
        src = _vocab_tokens(given["src_vocab"], "src_vocab", cfg["src_vocab_size"])
        tgt = _vocab_tokens(given["tgt_vocab"], "tgt_vocab", cfg["tgt_vocab_size"])
        meta["attnlite.src_vocab"] = json.dumps(src, ensure_ascii=False)
        meta["attnlite.tgt_vocab"] = json.dumps(tgt, ensure_ascii=False)
    elif kind == "lm":
        toks = _vocab_tokens(vocab, "vocab", cfg["vocab_size"])
        meta["attnlite.vocab"] = json.dumps(toks, ensure_ascii=False)
    else:
        if isinstance(labels, str) or not all(isinstance(x, str) for x in labels):
            raise ValueError("labels must be a list of str")
        labels = list(labels)
        if len(labels) != cfg["num_classes"]:
            raise ValueError(f"{len(labels)} labels for {cfg['num_classes']} classes: one label "
                             f"per class")
        meta["attnlite.labels"] = json.dumps(labels, ensure_ascii=False)
    # eval, license, training first (the project's order), then the rest as given
    for k in ("eval", "license", "training"):
        if k in info:
            meta["attnlite." + k] = _json(info[k])
    for k, v in info.items():
        if k not in ("eval", "license", "training"):
            meta["attnlite." + k] = _json(v)

    tensors = OrderedDict((k, v.detach().cpu().float().contiguous().numpy())
                          for k, v in state.items())
    if int8:
        tensors = _quantize(tensors)
        meta["attnlite.quantization"] = QUANTIZATION
    data = _safetensors_bytes(tensors, meta)
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(data)
