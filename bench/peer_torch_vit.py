"""PyTorch eager peer of bench/bench_classify.cpp: the lab's VisionTransformer
(tools/attnlite_tools/vit.py, vit.load_vit) on the test digits, as a user runs it.

    /usr/bin/python3 bench/peer_torch_vit.py --dir OUT_DIR --threads N --batch B
        [--min-time 2] [--min-runs 10] [--grad-mode no_grad|inference] [--label pytorch]
        [--device cpu|cuda] [--logits OUT.f32] [--json OUT]

OUT_DIR is tools/export_vit_bench.py's (digits.f32: raw pixels 0..16, vit.json). The module
is loaded from vit.json's source file (the same weights attnlite reads), in eval mode.
Per batch: net(pixels * input_scale) under torch.no_grad() (default; the lab's own
inference code) or torch.inference_mode(), labels by argmax. In eval mode without a mask and
with autograd off, PyTorch 1.13's nn.TransformerEncoderLayer takes its fused fast path
(torch._transformer_encoder_layer_fwd); the number of fused calls of the check pass is
reported ("fast_path_calls": 3 per batch = depth).

Workload (the same in every runtime): every image once in batches of B (the last batch the
remainder). images/s = N / median seconds per workload. Threads: torch.set_num_threads(N)
(and OPENBLAS_NUM_THREADS / OMP_NUM_THREADS from bench/vit.sh).

Device: --device cuda runs the same code on an NVIDIA GPU (fp32, TF32 off): the net and the
images (copied there once, before the check pass) live there, the logits come back to the
host for --logits, and each timed workload ends with torch.cuda.synchronize() (cpu_s stays
the host process's CPU time); without a GPU it exits with "no CUDA device". The result's
"device" is "cpu" or the GPU's name.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from attnlite_tools import vit  # noqa: E402
from attnlite_tools.fixtures_vit import call_counting_fast_path  # noqa: E402
from torch_device import fp32_device  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--grad-mode", choices=["inference", "no_grad"], default="no_grad")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: the same workload on an NVIDIA GPU (fp32, TF32 off)")
    ap.add_argument("--label", default="pytorch")
    ap.add_argument("--logits", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    dev, sync = fp32_device(a.device, "peer_torch_vit")
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "vit.json")) as f:
        info = json.load(f)
    net, _, _ = vit.load_vit(info["source"])
    net = net.to(dev).eval()
    C, S = info["channels"], info["image_size"]
    x = torch.from_numpy(np.fromfile(os.path.join(a.dir, info["images"]),
                                     dtype=np.float32).reshape(-1, C, S, S)).to(dev)
    n = x.shape[0]
    scale = float(info["input_scale"])
    assert not info["invert"]
    chunks = [x[i:i + a.batch] for i in range(0, n, a.batch)]
    mode = torch.inference_mode if a.grad_mode == "inference" else torch.no_grad
    with mode():
        outs, fused = [], 0
        for c in chunks:
            z, k = call_counting_fast_path(net, c * scale)
            outs.append(z)
            fused += k
        logits = torch.cat(outs)
        pred = logits.argmax(1).tolist()

        def workload():
            for c in chunks:
                net(c * scale).argmax(1)

        workload()  # warm-up
        sync()
        walls, cpus = [], []
        start = time.perf_counter()
        while len(walls) < a.min_runs or time.perf_counter() - start < a.min_time:
            c0, w0 = time.process_time(), time.perf_counter()
            workload()
            sync()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    if a.logits:
        logits.cpu().numpy().astype(np.float32).tofile(a.logits)
    w, c = statistics.median(walls), statistics.median(cpus)
    blas = "openblas" if "openblas" in os.environ.get("LD_LIBRARY_PATH", "") else "reference"
    device = "cpu" if dev.type == "cpu" else torch.cuda.get_device_name(dev)
    res = {"peer": a.label, "torch": torch.__version__, "blas": blas, "device": device,
           "grad_mode": a.grad_mode,
           "threads": torch.get_num_threads(), "batch": a.batch, "images": n,
           "runs": len(walls), "wall_s": w, "min_wall_s": min(walls), "cpu_s": c,
           "img_s": n / w, "cpu_img_s": n / c, "fast_path_calls": fused,
           "batches": len(chunks), "logits": a.logits or "", "pred": pred}
    line = json.dumps(res)
    print(line)
    if a.json:
        with open(a.json, "w") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
