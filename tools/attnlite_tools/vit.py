"""The lab report's Vision Transformer (exercise 10.7.6), its digits data and its file.

VisionTransformer is the lab's model with the same state_dict() names:

    patch_embedding.projection.0   nn.Conv2d(C, D, kernel_size=p, stride=p): weight (D, C, p, p)
    patch_embedding.projection.1   PatchesToTokens, the lab's einops
                                   Rearrange('b c h w -> b (h w) c') (no parameters):
                                   x.flatten(2).transpose(1, 2), patches in row-major order
    cls_token                      (1, 1, D), zeros at first
    pos_embedding                  (1, N + 1, D), zeros at first, N = (image_size // p) ** 2
    dropout                        nn.Dropout after the position embedding
    transformer_encoder.layers.K   nn.TransformerEncoder(nn.TransformerEncoderLayer(D, heads,
                                   dim_feedforward, dropout, activation, batch_first=True),
                                   depth): self_attn.in_proj_weight (3D, D), in_proj_bias,
                                   out_proj, linear1, linear2, norm1, norm2
    mlp_head                       nn.Sequential(nn.LayerNorm(D), nn.Linear(D, classes))

forward: patches -> tokens, [CLS] in front, + pos_embedding, dropout, the encoder, the
[CLS] token's output -> mlp_head. The lab's mlp_ratio * D feed-forward width is the
default of dim_feedforward; activation (lab: gelu), norm_first (lab: False, post-LN) and
layer_norm_eps (lab: 1e-5; it is the eps of every LayerNorm, the layers' norm1 and norm2
and mlp_head.0) are options. Initialisation as the lab's _init_weights: Xavier-uniform weights and zero
biases for every nn.Linear (out_proj, linear1, linear2, the head), LayerNorms 1 and 0;
in_proj_weight keeps nn.MultiheadAttention's own Xavier-uniform init, and since
nn.TransformerEncoder deep-copies one layer, every layer starts with the same
in_proj_weight (as in the lab).

The file (attnlite.kind "vit"): state_dict() under those names, F32 (or int8 matrices in
tools/quantize.py's layout; the 4-D patch weight is not quantized), plus __metadata__
attnlite.format "1", attnlite.kind "vit", attnlite.config (CONFIG_KEYS), attnlite.labels
(JSON list of class names), and for shipped models attnlite.eval, attnlite.license,
attnlite.training. The model reads pixel * input_scale (invert false) or
1 - pixel * input_scale (invert true); see input_tensor.
"""
import collections
import json

import numpy as np
import torch
from torch import nn

from . import export
from . import quantize
from . import safetensors as st

CONFIG_KEYS = ["image_size", "patch_size", "in_channels", "num_classes", "embed_dim",
               "depth", "num_heads", "dim_feedforward", "activation", "norm_first",
               "layer_norm_eps", "input_scale", "invert"]

DIGITS_LICENSE = (
    "Trained on the scikit-learn copy (sklearn.datasets.load_digits: 1,797 8x8 images) of "
    "the test set of 'Optical Recognition of Handwritten Digits' by E. Alpaydin and "
    "C. Kaynak (1998), UCI Machine Learning Repository, https://doi.org/10.24432/C50P49, "
    "licensed CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)")


class PatchesToTokens(nn.Module):
    """einops Rearrange('b c h w -> b (h w) c'): (B, D, h, w) -> (B, h * w, D)."""

    def forward(self, x):
        return x.flatten(2).transpose(1, 2)


class PatchEmbedding(nn.Module):
    def __init__(self, image_size=224, patch_size=16, in_channels=3, embed_dim=768):
        super().__init__()
        self.image_size = image_size
        self.patch_size = patch_size
        self.num_patches = (image_size // patch_size) ** 2
        self.projection = nn.Sequential(
            nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size),
            PatchesToTokens())

    def forward(self, x):
        return self.projection(x)


class VisionTransformer(nn.Module):
    def __init__(self, image_size=224, patch_size=16, in_channels=3, num_classes=1000,
                 embed_dim=768, depth=12, num_heads=12, mlp_ratio=4, dropout=0.1,
                 dim_feedforward=None, activation="gelu", norm_first=False,
                 layer_norm_eps=1e-5):
        super().__init__()
        self.patch_embedding = PatchEmbedding(image_size, patch_size, in_channels, embed_dim)
        num_patches = self.patch_embedding.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embedding = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        self.dropout = nn.Dropout(dropout)
        if dim_feedforward is None:
            dim_feedforward = mlp_ratio * embed_dim
        encoder_layer = nn.TransformerEncoderLayer(
            d_model=embed_dim, nhead=num_heads, dim_feedforward=dim_feedforward,
            dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps,
            batch_first=True, norm_first=norm_first)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layer, num_layers=depth)
        self.mlp_head = nn.Sequential(nn.LayerNorm(embed_dim, eps=layer_norm_eps),
                                      nn.Linear(embed_dim, num_classes))
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def embed(self, x):
        """(B, C, H, W) -> (B, N + 1, D): [CLS] + patch tokens, plus positions (before the
        dropout)."""
        x = self.patch_embedding(x)
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)  # repeat '1 1 d -> b 1 d'
        x = torch.cat([cls_tokens, x], dim=1)
        return x + self.pos_embedding

    def forward(self, x):
        x = self.dropout(self.embed(x))
        x = self.transformer_encoder(x)
        return self.mlp_head(x[:, 0])


def vit_config(image_size, patch_size, in_channels, num_classes, embed_dim, depth,
               num_heads, dim_feedforward, activation="gelu", norm_first=False,
               layer_norm_eps=1e-5, input_scale=1.0, invert=False):
    return collections.OrderedDict([
        ("image_size", image_size), ("patch_size", patch_size),
        ("in_channels", in_channels), ("num_classes", num_classes),
        ("embed_dim", embed_dim), ("depth", depth), ("num_heads", num_heads),
        ("dim_feedforward", dim_feedforward), ("activation", activation),
        ("norm_first", norm_first), ("layer_norm_eps", layer_norm_eps),
        ("input_scale", input_scale), ("invert", invert)])


def build(cfg, dropout=0.0):
    return VisionTransformer(cfg["image_size"], cfg["patch_size"], cfg["in_channels"],
                             cfg["num_classes"], cfg["embed_dim"], cfg["depth"],
                             cfg["num_heads"], dropout=dropout,
                             dim_feedforward=cfg["dim_feedforward"],
                             activation=cfg["activation"], norm_first=cfg["norm_first"],
                             layer_norm_eps=cfg["layer_norm_eps"])


def input_tensor(pixels, cfg):
    """The model's input from raw pixels (B, C, H, W) (the digits model: the data set's
    integers 0..16): pixel * input_scale, or 1 - pixel * input_scale with invert, in
    float32."""
    x = torch.as_tensor(np.asarray(pixels), dtype=torch.float32) * float(cfg["input_scale"])
    return 1.0 - x if cfg["invert"] else x


def file_tensors(net):
    return collections.OrderedDict((k, v.detach().cpu().float().contiguous())
                                   for k, v in net.state_dict().items())


def file_metadata(cfg, labels, evaluation=None, license=None, training=None):
    missing = [k for k in CONFIG_KEYS if k not in cfg]
    if missing:
        raise ValueError(f"config lacks {missing}")
    if len(labels) != cfg["num_classes"]:
        raise ValueError("one label per class")
    meta = collections.OrderedDict([
        ("attnlite.format", export.FORMAT), ("attnlite.kind", "vit"),
        ("attnlite.config", json.dumps(cfg)),
        ("attnlite.labels", json.dumps(list(labels), ensure_ascii=False))])
    if evaluation is not None:
        meta["attnlite.eval"] = json.dumps(evaluation)
    if license is not None:
        meta["attnlite.license"] = license
    if training is not None:
        meta["attnlite.training"] = json.dumps(training)
    return meta


def save_vit(net, path, cfg, labels, evaluation=None, license=None, training=None,
             int8=False):
    """Writes net.state_dict() (F32, or int8 matrices with int8) and the metadata;
    returns the file size."""
    tensors = file_tensors(net)
    meta = file_metadata(cfg, labels, evaluation, license, training)
    if int8:
        tensors, meta = quantize.quantize_model(tensors, meta)
    return st.save(path, tensors, meta)


def load_vit(path):
    """(net in eval mode, labels, metadata with config/eval/training decoded); int8 files
    are dequantized (scale * q in float32)."""
    tensors, meta = st.load(path)
    tensors = quantize.dequantize(tensors)
    if meta.get("attnlite.kind") != "vit":
        raise ValueError(f"{path}: not an attnlite vit file")
    cfg = json.loads(meta["attnlite.config"])
    net = build(cfg)
    net.load_state_dict(tensors, strict=True)
    net.eval()
    info = dict(meta)
    for k in ("config", "eval", "training"):
        info[k] = json.loads(meta.get("attnlite." + k, "{}"))
    return net, json.loads(meta["attnlite.labels"]), info


# ---------------------------------------------------------------------------------------
# The digits data

DIGITS_SPLIT_SEED = 0
DIGITS_TEST_FRACTION = 0.2
DIGITS_VAL_FRACTION = 0.1
DIGITS_SPLIT_RULE = (
    "per class c (in load_digits order): idx = indices with target c, "
    "perm = numpy.random.RandomState(0 + c).permutation(len(idx)); the first "
    "round(0.2 * n_c) of idx[perm] are test, the next round(0.1 * n_c) validation, the "
    "rest train; each split sorted ascending")


def load_digits():
    """(images uint8 (1797, 8, 8) with values 0..16, labels int64 (1797,))."""
    from sklearn.datasets import load_digits as sk_load
    d = sk_load()
    images = d.images.astype(np.uint8)
    assert np.array_equal(images.astype(np.float64), d.images)
    return images, d.target.astype(np.int64)


def digits_split(labels, seed=DIGITS_SPLIT_SEED):
    """{'train', 'val', 'test'}: sorted index arrays, stratified by class (see
    DIGITS_SPLIT_RULE)."""
    out = {"train": [], "val": [], "test": []}
    for c in range(10):
        idx = np.flatnonzero(labels == c)
        idx = idx[np.random.RandomState(seed + c).permutation(len(idx))]
        nt = int(round(DIGITS_TEST_FRACTION * len(idx)))
        nv = int(round(DIGITS_VAL_FRACTION * len(idx)))
        out["test"].append(idx[:nt])
        out["val"].append(idx[nt:nt + nv])
        out["train"].append(idx[nt + nv:])
    return {k: np.sort(np.concatenate(v)) for k, v in out.items()}
