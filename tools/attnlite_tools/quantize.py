"""Int8 weights for an attnlite model: per-output-channel symmetric quantization.

    /usr/bin/python3 tools/quantize.py IN.safetensors OUT.safetensors

Every matrix that attnlite runs through a linear layer or looks rows up in (names ending
in `.weight` with two dimensions: nn.Linear weights and nn.Embedding tables; also
nn.MultiheadAttention's packed `.in_proj_weight` (3D, D) of the language model
(tools/train_lm.py); not the GRU's weights, not LayerNorm) becomes

    <name>.weight        I8  (rows, cols)   q = round(w / scale), in [-127, 127]
    <name>.weight_scale  F32 (rows,)        scale = max |w[row]| / 127 (0 for a zero row)

(for `<name>.in_proj_weight`: `<name>.in_proj_weight` I8 and `<name>.in_proj_weight_scale`
F32, the same rule: the scale's name is the weight's name + "_scale")

so that w ~ scale[:, None] * q, one scale per output feature of a linear layer (one per
token of an embedding table).  Biases, LayerNorm parameters, GRU weights and the metadata
stay as they are; `attnlite.quantization` records the scheme.  tools/export.py's
load_model reads such a file back with the dequantized weights, which is the PyTorch
reference the int8 kernels are tested against.
"""
import os
import sys
from collections import OrderedDict

import torch

from . import safetensors as st

SCHEME = "int8 symmetric per output channel: <name>.weight I8, <name>.weight_scale F32"


# The Vision Transformer's patch kernel (D, C, p, p) is a linear layer over flattened patches:
# it is quantized per output channel like a (D, C·p·p) matrix and keeps its 4-D shape.
CONV_KERNELS = ("patch_embedding.projection.0.weight",)


def quantizable(name, t):
    if name in CONV_KERNELS:
        return t.dim() == 4
    return ((name.endswith(".weight") or name.endswith(".in_proj_weight"))
            and t.dim() == 2 and ".rnn." not in name)


def quantize_matrix(w):
    """(q int8, scale float32) with w ~ scale[:, None] * q (rows = the first dimension; the
    others are flattened for the scale and kept in q's shape)."""
    w = w.detach().float()
    flat = w.reshape(w.shape[0], -1)
    amax = flat.abs().amax(dim=1)
    scale = amax / 127.0
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.round(flat / safe[:, None]).clamp_(-127, 127).to(torch.int8)
    return q.reshape(w.shape), scale.float()


def dequantize(tensors):
    """The fp32 state dict of a (possibly) quantized file: scale * q for every pair."""
    out = OrderedDict()
    for name, t in tensors.items():
        base = name[:-len("_scale")]
        if name.endswith("_scale") and base in tensors and tensors[base].dtype == torch.int8:
            continue
        if t.dtype == torch.int8:
            scale = tensors[name + "_scale"]
            out[name] = (scale.float()[:, None] * t.float().reshape(t.shape[0], -1)).reshape(t.shape)
        else:
            out[name] = t
    return out


def quantize(tensors):
    out = OrderedDict()
    for name, t in tensors.items():
        if quantizable(name, t):
            q, scale = quantize_matrix(t)
            out[name] = q
            out[name + "_scale"] = scale
        else:
            out[name] = t
    return out


def quantize_model(tensors, meta):
    """(int8 tensors, metadata with attnlite.quantization) of a model file's contents."""
    meta = OrderedDict(meta)
    meta["attnlite.quantization"] = SCHEME
    return quantize(tensors), meta


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src, dst = sys.argv[1:]
    tensors, meta = st.load(src)
    if any(t.dtype == torch.int8 for t in tensors.values()):
        sys.exit(f"{src} is already quantized")
    qt, meta = quantize_model(tensors, meta)
    n = st.save(dst, qt, meta)
    nq = sum(1 for k in qt if k.endswith("_scale"))
    err = max(float((dequantize(qt)[k] - tensors[k]).abs().max()) for k in tensors
              if quantizable(k, tensors[k]))
    print(f"{dst}: {n} bytes ({os.path.getsize(src)} before), {nq} matrices int8, "
          f"largest absolute weight error {err:.3g}")
