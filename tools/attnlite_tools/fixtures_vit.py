"""Fixtures of the Vision Transformer (kind "vit"), for attnlite's vit tests.

    /usr/bin/python3 tools/make_vit_fixtures.py [--out tests/fixtures]
        [--model models/vit-digits.safetensors] [--random-only]

One thread, eval mode, dropout 0, torch.manual_seed per case; every file is
byte-identical from run to run.

1. tests/fixtures/vit_patch.safetensors: the patch embedding alone (vit.PatchEmbedding:
   nn.Conv2d(C, D, kernel_size=p, stride=p), then (B, D, h, w) -> (B, h * w, D)) for
   PATCH_CASES, per case `<case>.weight` (D, C, p, p), `<case>.bias` (D),
   `in.<case>.x` (B, C, H, W), `out.<case>.y` (B, N, D); checked against an explicit
   unfold-and-matmul. __metadata__ config: {"cases": [{name, patch_size, in_channels,
   image_size, embed_dim, batch, num_patches}, ...], "formula": ...}.

2. Whole models (VIT_CASES), random weights: tests/fixtures/vit_<case>.safetensors, a
   model file exactly as attnlite reads it (vit.save_vit's format; the `lab224` case with
   int8 matrices in tools/quantize.py's layout), and vit_<case>.expect.safetensors:

     in.images   F32 (B, C, H, W)            the model's input as it is (input_scale 1,
                                             invert false: nothing to multiply)
     out.embed   F32 (B, N + 1, D)           [CLS] + patch tokens + pos_embedding (not in lab224)
     out.logits  F32 (B, classes)            net(images) in eval mode under no_grad
     out.attn    F32 (L, B, NH, N + 1, N + 1) per-head attention weights of every layer
     out.rollout F32 (B, N + 1, N + 1)       attention rollout (rollout())

3. The shipped model models/vit-digits.safetensors: tests/fixtures/vit_digits_test.json
   (every test-split image with PyTorch's prediction, probabilities and logits) and
   tests/fixtures/digits/ (one test image per class as 8x8 and 32x32 grey PNGs).

Rewrites the vit section of tests/fixtures/README.md.
"""
import argparse
import collections
import json
import math
import os

import torch
import torch.nn.functional as F

from . import quantize
from . import safetensors as st
from . import vit
from .fixtures_layers import assert_close
from .paths import FIXTURES_DIR, MODELS_DIR

VIT_MARKER = "<!-- vit fixtures -->"

# --------------------------------------------------------------------------------------
# Counting PyTorch's fused encoder-layer kernel (the "fast path" of
# nn.TransformerEncoderLayer in eval mode without autograd)

_FAST_CALLS = [0]
_fused = torch._transformer_encoder_layer_fwd


def _counting_fused(*args, **kwargs):
    _FAST_CALLS[0] += 1
    return _fused(*args, **kwargs)


def call_counting_fast_path(fn, *args):
    """(fn(*args), number of fused encoder-layer calls it made)."""
    torch._transformer_encoder_layer_fwd = _counting_fused
    _FAST_CALLS[0] = 0
    try:
        out = fn(*args)
    finally:
        torch._transformer_encoder_layer_fwd = _fused
    return out, _FAST_CALLS[0]


def user_logits(net, x):
    """net(x) as a user calls it for inference: eval mode, torch.no_grad(). Returns
    (logits, fused encoder-layer calls)."""
    net.eval()
    with torch.no_grad():
        return call_counting_fast_path(net, x)


def slow_path_logits(net, x):
    """The same forward with autograd on (PyTorch then takes the layers' regular
    kernels: nn.MultiheadAttention, LayerNorm, Linear one by one)."""
    net.eval()
    with torch.enable_grad():
        out, n = call_counting_fast_path(net, x)
    assert n == 0
    return out.detach()


# --------------------------------------------------------------------------------------
# 1. The patch embedding

# (name, patch_size, in_channels, image_size, embed_dim, batch, seed)
PATCH_CASES = [
    ("p2_c1_i8", 2, 1, 8, 5, 2, 201),
    ("p4_c3_i16", 4, 3, 16, 6, 2, 202),
    ("p7_c2_i14", 7, 2, 14, 8, 3, 203),
    ("p4_c1_i10", 4, 1, 10, 3, 2, 204),
]
PATCH_FORMULA = ("y[b, i * (H // p) + j, d] = bias[d] + sum over c < C, u < p, v < p of "
                 "weight[d, c, u, v] * x[b, c, i * p + u, j * p + v], for i, j < H // p "
                 "(patches in row-major order; rows and columns past (H // p) * p are "
                 "not read)")


def explicit_patches(x, weight, bias):
    """The patch embedding by unfold and matmul (the formula above)."""
    B, C, H, W = x.shape
    D, _, p, _ = weight.shape
    n = H // p
    cols = (x[:, :, :n * p, :n * p].reshape(B, C, n, p, n, p).permute(0, 2, 4, 1, 3, 5)
            .reshape(B, n * n, C * p * p))
    return cols @ weight.reshape(D, C * p * p).T + bias


def write_patch(out_dir):
    tensors = collections.OrderedDict()
    cases = []
    worst = 0.0
    for name, p, C, S, D, B, seed in PATCH_CASES:
        torch.manual_seed(seed)
        pe = vit.PatchEmbedding(S, p, C, D)
        conv = pe.projection[0]
        with torch.no_grad():
            conv.weight.normal_(0, (C * p * p) ** -0.5)
            conv.bias.normal_(0, 0.1)
        x = torch.randn(B, C, S, S)
        with torch.no_grad():
            y = pe(x)
            ref = explicit_patches(x, conv.weight, conv.bias)
            via_conv = F.conv2d(x, conv.weight, conv.bias, stride=p).flatten(2).transpose(1, 2)
        n = (S // p) ** 2
        assert y.shape == (B, n, D) and pe.num_patches == n
        assert torch.equal(y, via_conv)
        d = float((y - ref).abs().max())
        assert d < 1e-5, (name, d)
        worst = max(worst, d)
        tensors[f"{name}.weight"] = conv.weight.detach().clone()
        tensors[f"{name}.bias"] = conv.bias.detach().clone()
        tensors[f"in.{name}.x"] = x
        tensors[f"out.{name}.y"] = y.contiguous()
        cases.append(collections.OrderedDict([
            ("name", name), ("patch_size", p), ("in_channels", C), ("image_size", S),
            ("embed_dim", D), ("batch", B), ("num_patches", n)]))
    config = collections.OrderedDict([("cases", cases), ("formula", PATCH_FORMULA)])
    path = os.path.join(out_dir, "vit_patch.safetensors")
    nbytes = st.save(path, tensors, {"config": json.dumps(config)})
    print(f"vit_patch.safetensors: {len(cases)} cases, {nbytes} bytes; explicit unfold "
          f"max abs diff {worst:.2g}")
    return dict(cases=cases, tensors=tensors, nbytes=nbytes, worst=worst)


# --------------------------------------------------------------------------------------
# 2. Whole models

# name -> case; everything not given takes VIT_BASE's value.
VIT_BASE = dict(image_size=8, patch_size=2, in_channels=1, num_classes=10, embed_dim=16,
                depth=2, num_heads=2, dim_feedforward=32, activation="gelu",
                norm_first=False, layer_norm_eps=1e-5, batch=3, int8=False)
VIT_CASES = collections.OrderedDict([
    ("post_gelu", dict(seed=301, what="the lab's layer (post-LN, exact GELU) on the "
                       "digits model's shape: image 8, patch 2, one channel")),
    ("pre_gelu", dict(seed=302, image_size=12, patch_size=4, in_channels=3, embed_dim=24,
                      num_heads=4, dim_feedforward=48, num_classes=5, norm_first=True,
                      batch=2, what="pre-LN (norm_first), GELU, 3 channels, 4 heads of 6")),
    ("post_relu_eps6", dict(seed=303, image_size=9, patch_size=3, in_channels=2,
                            num_heads=4, depth=3, dim_feedforward=24, activation="relu",
                            layer_norm_eps=1e-6, num_classes=3, batch=2,
                            what="post-LN, ReLU, LayerNorm eps 1e-6, 3 layers, patch 3 "
                                 "on 9x9 (10 tokens)")),
    ("pre_relu_1head", dict(seed=304, image_size=6, patch_size=2, in_channels=1,
                            num_heads=1, norm_first=True, activation="relu",
                            num_classes=4, batch=2,
                            what="pre-LN, ReLU, one head of 16 (an odd head count: "
                                 "PyTorch's regular kernels, not the fused one)")),
    ("lab224", dict(seed=305, image_size=224, patch_size=16, in_channels=3, embed_dim=768,
                    num_heads=12, depth=1, dim_feedforward=768, num_classes=10, batch=1,
                    int8=True,
                    what="the lab's shape (image 224, patch 16, 3 channels, D 768, 12 heads), "
                         "one layer, mlp_ratio 1 (F 768, the lab's 4 would add 3.5 MB), 10 "
                         "classes (the lab's 1000 would add 0.8 MB), int8 matrices and patch "
                         "kernel")),
])
CLS_STD, POS_STD = 0.5, 0.3
IN_PROJ_GAIN = 2.0  # in_proj_weight N(0, 4/D): scores 4 times larger, sharper attention


def case_config(case):
    c = dict(VIT_BASE, **case)
    cfg = vit.vit_config(c["image_size"], c["patch_size"], c["in_channels"],
                         c["num_classes"], c["embed_dim"], c["depth"], c["num_heads"],
                         c["dim_feedforward"], c["activation"], c["norm_first"],
                         c["layer_norm_eps"], 1.0, False)
    return cfg, c


def randomize(net):
    """Matrices (and the patch kernel) N(0, 1/fan_in) (in_proj_weight N(0, 4/D)), biases
    0.1 N(0, 1), LayerNorm weights 1 + 0.1 N(0, 1) and biases 0.1 N(0, 1), cls_token
    N(0, 0.5^2), pos_embedding N(0, 0.3^2)."""
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name == "cls_token":
                p.normal_(0, CLS_STD)
            elif name == "pos_embedding":
                p.normal_(0, POS_STD)
            elif p.dim() == 1 and ("norm" in name or name.startswith("mlp_head.0")):
                if name.endswith("weight"):
                    p.copy_(1 + 0.1 * torch.randn(p.shape))
                else:
                    p.normal_(0, 0.1)
            elif name.endswith("bias"):
                p.normal_(0, 0.1)
            elif name.endswith("in_proj_weight"):
                p.normal_(0, IN_PROJ_GAIN * p.shape[1] ** -0.5)
            else:
                p.normal_(0, (p[0].numel()) ** -0.5)


def expected_names(cfg):
    names = ["cls_token", "pos_embedding", "patch_embedding.projection.0.weight",
             "patch_embedding.projection.0.bias"]
    for i in range(cfg["depth"]):
        p = f"transformer_encoder.layers.{i}."
        names += [p + n for n in (
            "self_attn.in_proj_weight", "self_attn.in_proj_bias",
            "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
            "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
            "norm2.weight", "norm2.bias")]
    return names + ["mlp_head.0.weight", "mlp_head.0.bias", "mlp_head.1.weight",
                    "mlp_head.1.bias"]


@torch.no_grad()
def traced_attention(net, cfg, x):
    """(embed (B, N+1, D), attn (L, B, NH, N+1, N+1)): each layer's self_attn called on its
    attention input (the layer input for post-LN, norm1 of it for pre-LN) with
    need_weights=True, average_attn_weights=False; the layer output recomputed from the
    pieces must equal the layer's own output (as a user's call computes it)."""
    act = F.relu if cfg["activation"] == "relu" else F.gelu
    H = net.embed(x)
    embed = H
    attn = []
    for i, layer in enumerate(net.transformer_encoder.layers):
        a = layer.norm1(H) if cfg["norm_first"] else H
        o, w = layer.self_attn(a, a, a, need_weights=True, average_attn_weights=False)
        if cfg["norm_first"]:
            y = H + o
            y = y + layer.linear2(act(layer.linear1(layer.norm2(y))))
        else:
            y = layer.norm1(H + o)
            y = layer.norm2(y + layer.linear2(act(layer.linear1(y))))
        own = layer(H)
        assert_close(own, y, 1e-5, f"layer {i} output vs its recomputation")
        attn.append(w)
        H = own
    return embed, torch.stack(attn, 0)


def rollout(attn):
    """Attention rollout (Abnar and Zuidema 2020) of attn (L, B, NH, T, T), in float64:
    per layer A = mean over heads, A' = (A + I) / rowsum(A + I) (each row sums to 1), then
    R = A'_L @ ... @ A'_1 (B, T, T). Returned as float32."""
    a = attn.double().mean(2)
    eye = torch.eye(a.shape[-1], dtype=torch.float64)
    R = None
    for layer in a:
        A = layer + eye
        A = A / A.sum(-1, keepdim=True)
        R = A if R is None else A @ R
    return R.float()


def explicit_forward(W, cfg, x):
    """(logits, attn) from the file's tensors alone, as a runtime computes them: patch
    unfold-and-matmul, [CLS] in front, + pos_embedding, the encoder layers (per-head
    softmax attention, post- or pre-LN, ReLU/GELU FFN), LayerNorm and Linear on [CLS]."""
    D, NH, eps = cfg["embed_dim"], cfg["num_heads"], cfg["layer_norm_eps"]
    dh = D // NH
    act = torch.relu if cfg["activation"] == "relu" else F.gelu
    B = x.shape[0]
    tok = explicit_patches(x, W["patch_embedding.projection.0.weight"],
                           W["patch_embedding.projection.0.bias"])
    X = torch.cat([W["cls_token"].expand(B, 1, D), tok], 1) + W["pos_embedding"]

    def ln(h, p):
        mu = h.mean(-1, keepdim=True)
        var = ((h - mu) ** 2).mean(-1, keepdim=True)
        return (h - mu) / torch.sqrt(var + eps) * W[p + ".weight"] + W[p + ".bias"]

    attn = []
    for i in range(cfg["depth"]):
        p = f"transformer_encoder.layers.{i}."

        def sa(h):
            qkv = h @ W[p + "self_attn.in_proj_weight"].T + W[p + "self_attn.in_proj_bias"]
            q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
            heads, ws = [], []
            for j in range(NH):
                s = slice(j * dh, (j + 1) * dh)
                w = torch.softmax(q[..., s] @ k[..., s].transpose(1, 2) / math.sqrt(dh), -1)
                ws.append(w)
                heads.append(w @ v[..., s])
            attn.append(torch.stack(ws, 1))
            return (torch.cat(heads, -1) @ W[p + "self_attn.out_proj.weight"].T
                    + W[p + "self_attn.out_proj.bias"])

        def ffn(h):
            h = act(h @ W[p + "linear1.weight"].T + W[p + "linear1.bias"])
            return h @ W[p + "linear2.weight"].T + W[p + "linear2.bias"]

        if cfg["norm_first"]:
            X = X + sa(ln(X, p + "norm1"))
            X = X + ffn(ln(X, p + "norm2"))
        else:
            X = ln(X + sa(X), p + "norm1")
            X = ln(X + ffn(X), p + "norm2")
    logits = ln(X[:, 0], "mlp_head.0") @ W["mlp_head.1.weight"].T + W["mlp_head.1.bias"]
    return logits, torch.stack(attn, 0)


def write_case(out_dir, name, case):
    cfg, c = case_config(case)
    torch.manual_seed(c["seed"])
    net = vit.build(cfg, dropout=0.0)
    randomize(net)
    net.eval()
    S, C, B = cfg["image_size"], cfg["in_channels"], c["batch"]
    images = torch.rand(B, C, S, S)
    tensors = vit.file_tensors(net)
    assert list(tensors) == expected_names(cfg), list(tensors)
    meta = vit.file_metadata(cfg, [f"class{i}" for i in range(cfg["num_classes"])])
    if c["int8"]:
        tensors, meta = quantize.quantize_model(tensors, meta)
        # the reference runs on the weights the file stands for
        net.load_state_dict(quantize.dequantize(tensors), strict=True)
    model_path = os.path.join(out_dir, f"vit_{name}.safetensors")
    n_model = st.save(model_path, tensors, meta)

    logits, fast_calls = user_logits(net, images)
    slow = slow_path_logits(net, images)
    d_slow = float((logits - slow).abs().max())
    embed, attn = traced_attention(net, cfg, images)
    R = rollout(attn)
    # the file read back, computed from its tensors alone
    W, back_meta = st.load(model_path)
    W = quantize.dequantize(W)
    assert json.loads(back_meta["attnlite.config"]) == cfg
    ref_logits, ref_attn = explicit_forward(W, cfg, images)
    d_logits = float((ref_logits - logits).abs().max())
    d_attn = float((ref_attn - attn).abs().max())
    assert d_logits < 5e-6 and d_attn < 5e-6, (name, d_logits, d_attn)
    assert torch.allclose(R.sum(-1), torch.ones(B, R.shape[1]), atol=1e-6)
    # how far PyTorch's float32 result is from the same computation in float64
    l64 = explicit_forward({k: v.double() for k, v in W.items()}, cfg, images.double())[0]
    d_f64 = float((logits.double() - l64).abs().max())
    expect = collections.OrderedDict([("in.images", images)] +
                                     ([] if c["int8"] else [("out.embed", embed)]) +
                                     [("out.logits", logits), ("out.attn", attn), ("out.rollout", R)])
    expect = collections.OrderedDict((k, v.detach().contiguous()) for k, v in expect.items())
    emeta = collections.OrderedDict([
        ("config", json.dumps(cfg)), ("case", name),
        ("fast_path", json.dumps(fast_calls > 0)),
        ("weights", "int8 dequantized (scale * q, float32)" if c["int8"] else "float32")])
    n_expect = st.save(os.path.join(out_dir, f"vit_{name}.expect.safetensors"), expect,
                       emeta)
    T = attn.shape[-1]
    stats = dict(min_row_max=float(attn.max(-1).values.min()),
                 max_attn=float(attn.max()), uniform=1.0 / T,
                 logit_std=float(logits.std()), d_logits=d_logits, d_attn=d_attn,
                 d_slow=d_slow, fast_calls=fast_calls, d_f64=d_f64,
                 cls_rollout_max=float(R[:, 0, 1:].max()))
    if cfg["layer_norm_eps"] != 1e-5:
        other = dict(cfg, layer_norm_eps=1e-5)
        stats["d_eps"] = float((explicit_forward(W, other, images)[0] - logits).abs().max())
    if c["int8"]:
        f32 = vit.build(cfg)
        f32.load_state_dict(vit.file_tensors(net), strict=True)
        stats["int8_mats"] = sum(1 for k in tensors if k.endswith("_scale"))
    print(f"vit_{name}: model {n_model} bytes, expect {n_expect} bytes; fused encoder-layer "
          f"calls {fast_calls}, |fused - regular| {d_slow:.2g}; explicit pass |dlogits| "
          f"{d_logits:.2g} |dattn| {d_attn:.2g}; float64 |dlogits| {d_f64:.2g}; attention "
          "row maxima "
          f"{stats['min_row_max']:.3f} .. {stats['max_attn']:.3f} (uniform {1 / T:.3f}); "
          f"logit std {stats['logit_std']:.3f}")
    return dict(name=name, cfg=cfg, case=c, tensors=tensors, expect=expect,
                n_model=n_model, n_expect=n_expect, stats=stats)


def make():
    """Writes the patch and random-model fixtures (the command line of
    tools/make_vit_fixtures.py); returns the arguments, the patch case and the random cases'
    results. fixtures_vit_readme.main() adds the shipped model's fixtures and the README."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=FIXTURES_DIR)
    ap.add_argument("--model", default=os.path.join(MODELS_DIR, "vit-digits.safetensors"))
    ap.add_argument("--random-only", action="store_true",
                    help="only vit_patch and the random models; README.md is left as it is")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    os.makedirs(args.out, exist_ok=True)
    patch = write_patch(args.out)
    results = [write_case(args.out, name, case) for name, case in VIT_CASES.items()]
    return args, patch, results
