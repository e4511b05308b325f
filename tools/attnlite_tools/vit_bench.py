"""The Vision Transformer's benchmark files for bench/vit.sh: the test digits every runtime
reads, the reference logits, and the ONNX graph for onnxruntime-node.

    /usr/bin/python3 tools/export_vit_bench.py MODEL.safetensors FIXTURE.json OUT_DIR

MODEL is models/vit-digits.safetensors, FIXTURE tests/fixtures/vit_digits_test.json (the 359
test digits, 8x8 integers 0..16, and the predicted labels). OUT_DIR receives

  digits.f32        the images as raw little-endian float32 (N, 1, 8, 8), the pixel values
                    0..16 as they are (every runtime multiplies by input_scale itself:
                    attnlite inside Classifier, the PyTorch peer before net(x), the ONNX
                    graph as its first node)
  ref_logits.f32    (N, K) float32: the lab's module (vit.load_vit, eval mode,
                    torch.no_grad(), the fused encoder-layer fast path) on the whole set
  vit.onnx          opset 14, float32: pixels (B, 1, 8, 8) -> logits (B, K), B dynamic;
                    traced from net(pixels * input_scale) with autograd on, so that the
                    trace records the layers' regular operators (the fused
                    _transformer_encoder_layer_fwd has no ONNX export); the graph is the
                    same arithmetic as the regular path
  vit.json          count, input_scale, config, the fixture's predicted labels, whether the
                    fast path ran and its largest difference from the regular path

Checks before writing: the reference's labels equal the fixture's "predicted", and its
logits equal the fixture's "logits" within 1e-4.
"""
import argparse
import json
import os

import numpy as np
import torch
from torch import nn

from . import vit
from .fixtures_vit import call_counting_fast_path


class ScaledViT(nn.Module):
    """pixels (B, C, S, S) 0..16 -> net(pixels * input_scale) (the digits model: invert
    false)."""

    def __init__(self, net, scale, invert):
        super().__init__()
        self.net = net
        self.scale = float(scale)
        self.invert = bool(invert)

    def forward(self, pixels):
        x = pixels * self.scale
        if self.invert:
            x = 1.0 - x
        return self.net(x)


def export(model, fixture, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(fixture) as f:
        fx = json.load(f)
    net, labels, info = vit.load_vit(model)
    cfg = info["config"]
    C, S = cfg["in_channels"], cfg["image_size"]
    pixels = np.asarray(fx["images"], dtype=np.float32).reshape(-1, C, S, S)
    n = pixels.shape[0]
    x = torch.from_numpy(pixels)
    with torch.no_grad():
        ref, fast_calls = call_counting_fast_path(net, vit.input_tensor(pixels, cfg))
    with torch.enable_grad():
        slow, slow_calls = call_counting_fast_path(net, vit.input_tensor(pixels, cfg))
    slow = slow.detach()
    assert slow_calls == 0
    pred = ref.argmax(1).tolist()
    if pred != fx["predicted"]:
        raise SystemExit("export_vit_bench: the module's labels differ from the fixture's")
    fx_err = float((ref - torch.tensor(fx["logits"])).abs().max())
    if fx_err > 1e-4:
        raise SystemExit(f"export_vit_bench: logits differ from the fixture's by {fx_err:.3g}")
    pixels.tofile(os.path.join(out_dir, "digits.f32"))
    ref.numpy().astype(np.float32).tofile(os.path.join(out_dir, "ref_logits.f32"))

    g = ScaledViT(net, cfg["input_scale"], cfg["invert"]).eval()
    for p in g.parameters():
        p.requires_grad_(True)
    with torch.enable_grad():
        torch.onnx.export(g, (x[:2].clone(),), os.path.join(out_dir, "vit.onnx"),
                          opset_version=14, input_names=["pixels"], output_names=["logits"],
                          dynamic_axes={"pixels": {0: "B"}, "logits": {0: "B"}})
    top2 = ref.topk(2, 1).values
    doc = {"count": n, "channels": C, "image_size": S, "num_classes": len(labels),
           "input_scale": cfg["input_scale"], "invert": cfg["invert"], "config": cfg,
           "predicted": pred, "fixture_predicted_equal": True,
           "fixture_logits_max_abs_diff": fx_err,
           "fast_path": fast_calls > 0, "fast_path_calls": fast_calls,
           "fast_vs_regular_max_abs_diff": float((ref - slow).abs().max()),
           "min_margin": float((top2[:, 0] - top2[:, 1]).min()),
           "images": "digits.f32", "ref_logits": "ref_logits.f32", "onnx": "vit.onnx",
           "source": os.path.abspath(model), "fixture": os.path.abspath(fixture)}
    with open(os.path.join(out_dir, "vit.json"), "w") as f:
        json.dump(doc, f, indent=1)
    return doc


def main():
    """tools/export_vit_bench.py"""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("fixture")
    ap.add_argument("out_dir")
    a = ap.parse_args()
    torch.set_num_threads(1)
    doc = export(a.model, a.fixture, a.out_dir)
    print(f"{a.out_dir}: digits.f32 ({doc['count']} images), ref_logits.f32, vit.onnx, vit.json")
    print(f"fast path: {doc['fast_path']} ({doc['fast_path_calls']} fused layer calls), "
          f"|fused - regular| {doc['fast_vs_regular_max_abs_diff']:.3g}; fixture logits "
          f"diff {doc['fixture_logits_max_abs_diff']:.3g}; smallest top-2 margin "
          f"{doc['min_margin']:.4f}")


if __name__ == "__main__":
    main()
