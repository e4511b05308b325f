"""The shipped digits model's fixtures (part 3 of fixtures_vit.py's docstring):
tests/fixtures/vit_digits_test.json (every test-split image with PyTorch's prediction,
probabilities and logits) and tests/fixtures/digits/ (one test image per class as 8x8 and
32x32 grey PNGs, written and read back here without an image library)."""
import collections
import json
import os
import struct
import zlib

import numpy as np
import torch

from . import vit
from .fixtures_vit import slow_path_logits, user_logits
from .paths import MODELS_DIR, ROOT

def png_bytes(grey):
    """An 8-bit greyscale PNG (colour type 0, no interlace, filter 0 on every row,
    zlib level 9) of a (h, w) uint8 array."""
    grey = np.ascontiguousarray(grey, dtype=np.uint8)
    h, w = grey.shape

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))

    raw = b"".join(b"\x00" + grey[r].tobytes() for r in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def read_png(data):
    """The (h, w) uint8 array of a PNG that png_bytes wrote (for the round-trip check)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w, h = 8, b"", None, None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 0
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, w + 1)
    assert not raw[:, 0].any()
    return raw[:, 1:].copy()


def grey_of(v):
    """Dark ink on white: grey = 255 - (v * 255 + 8) // 16 for the data set's v in 0..16."""
    return (255 - (np.asarray(v, dtype=np.int64) * 255 + 8) // 16).astype(np.uint8)


def value_of(grey):
    """The inverse: v = ((255 - grey) * 16 + 127) // 255."""
    return ((255 - np.asarray(grey, dtype=np.int64)) * 16 + 127) // 255


def f32(x):
    return [float(v) for v in np.asarray(x, dtype=np.float32).ravel()]


def digits_fixture(model_path, out_dir):
    net, labels, info = vit.load_vit(model_path)
    cfg = info["config"]
    images, targets = vit.load_digits()
    idx = vit.digits_split(targets)["test"]
    with open(os.path.join(MODELS_DIR, "vit-digits.split.json")) as f:
        assert json.load(f)["test"] == idx.tolist()
    x = vit.input_tensor(images[idx][:, None], cfg)
    logits, fast_calls = user_logits(net, x)
    slow = slow_path_logits(net, x)
    probs = torch.softmax(logits, -1)
    pred = logits.argmax(-1)
    assert torch.equal(slow.argmax(-1), pred)
    y = torch.from_numpy(targets[idx])
    top2 = logits.topk(2, -1).values
    margins = top2[:, 0] - top2[:, 1]
    correct = int((pred == y).sum())
    acc = correct / len(idx)
    ev = info["eval"]
    assert correct == ev["test_correct"], (correct, ev["test_correct"])
    # one correctly classified test image per class, the first in index order
    os.makedirs(os.path.join(out_dir, "digits"), exist_ok=True)
    pngs = []
    for d in range(10):
        k = next(k for k in range(len(idx)) if int(y[k]) == d and int(pred[k]) == d)
        v = images[idx[k]]
        grey = grey_of(v)
        assert np.array_equal(value_of(grey), v)
        big = np.repeat(np.repeat(grey, 4, 0), 4, 1)
        files = []
        for arr, suffix in ((grey, "8x8"), (big, "32x32")):
            fname = f"digits/idx{int(idx[k]):04d}_label{d}_{suffix}.png"
            data = png_bytes(arr)
            assert np.array_equal(read_png(data), arr)
            with open(os.path.join(out_dir, fname), "wb") as f:
                f.write(data)
            files.append(fname)
        pngs.append(collections.OrderedDict([
            ("file_8x8", files[0]), ("file_32x32", files[1]), ("index", int(idx[k])),
            ("position", k), ("label", d), ("predicted", int(pred[k])),
            ("probability", float(probs[k, d]))]))
    wrong = [k for k in range(len(idx)) if int(pred[k]) != int(y[k])]
    doc = collections.OrderedDict([
        ("model", os.path.relpath(model_path, ROOT)),
        ("data", "sklearn.datasets.load_digits(): images (8x8, integers 0..16), target"),
        ("split", vit.DIGITS_SPLIT_RULE),
        ("split_file", "models/vit-digits.split.json"),
        ("input", f"pixel * input_scale ({cfg['input_scale']}), invert false, shape "
                  "(B, 1, 8, 8)"),
        ("input_scale", cfg["input_scale"]),
        ("reference", "net(x) in eval mode under torch.no_grad(), the whole test split as "
                      "one batch, float32"),
        ("fast_path", fast_calls > 0),
        ("fast_path_vs_regular_max_abs_logit_diff", float((logits - slow).abs().max())),
        ("count", len(idx)), ("correct", correct), ("accuracy", acc),
        ("min_margin", float(margins.min())),
        ("wrong", wrong),
        ("labels", labels),
        ("indices", idx.tolist()),
        ("images", images[idx].tolist()),
        ("targets", y.tolist()),
        ("predicted", pred.tolist()),
        ("probs", [f32(r) for r in probs]),
        ("logits", [f32(r) for r in logits]),
        ("png", pngs),
        ("png_rule", "grey = 255 - (v * 255 + 8) // 16 (dark ink on white); back: "
                     "v = ((255 - grey) * 16 + 127) // 255; 32x32 = each pixel repeated "
                     "4x4 (nearest)"),
    ])
    with open(os.path.join(out_dir, "vit_digits_test.json"), "w") as f:
        f.write(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"vit_digits_test.json: {correct}/{len(idx)} = {acc:.4f}, smallest top-1/top-2 "
          f"logit gap {float(margins.min()):.3g}, fused encoder-layer calls {fast_calls}, "
          f"|fused - regular| {doc['fast_path_vs_regular_max_abs_logit_diff']:.2g}")
    return doc
