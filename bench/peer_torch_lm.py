"""PyTorch eager peer of bench/bench_generate.cpp: greedy generation with the language model
(lm.DecoderOnlyLM) and a key/value cache, as a careful user writes it.

    /usr/bin/python3 bench/peer_torch_lm.py --dir OUT_DIR --threads N [--tokens 16]
        [--gens 4] [--min-time 2] [--min-runs 10] [--grad-mode inference|no_grad]
        [--device cpu|cuda] [--json OUT]

OUT_DIR is tools/export_lm_bench.py's: lm.f32.safetensors (the int8 file's weights,
scale * q) and lm.json (prompt ids, expected tokens).

nn.TransformerEncoderLayer has no cache, so the step is written out with each layer's own
parameters: one in_proj matmul split into q, k, v; the new keys and values written into
caches preallocated for the whole context (L, NH, context, dh); scaled dot-product attention
over the cached prefix (the causal mask only for the prompt's own positions); out_proj,
norm1, linear1 + ReLU, linear2, norm2; the head on the last position only. Linear layers on
a single row (every step, and the head) use torch.addmv (see CachedLM.linear; --linear
linear keeps F.linear, i.e. nn.Linear's own call, everywhere). Before timing,
the cached logits are checked against DecoderOnlyLM's full forward pass (no cache, the whole
sequence every step) within 1e-5 at every step, and the greedy tokens against lm.json.

Workload (the same in every runtime): `gens` generations of `tokens` new tokens each from the
prompt; per generation the prompt pass, then tokens - 1 steps. tokens/s = gens * tokens /
median seconds per workload. Threads: torch.set_num_threads(N) (and OPENBLAS_NUM_THREADS
from bench/lm.sh). Grad mode: torch.inference_mode() by default (the faster of the two here);
torch.no_grad() with --grad-mode no_grad.

Device: --device cuda runs the same code on an NVIDIA GPU (fp32, TF32 off): the net, the
caches, the prompt and every new token tensor live there, the check runs there with the same
1e-5 bound, and each timed workload ends with torch.cuda.synchronize() (cpu_s stays the host
process's CPU time); without a GPU it exits with "no CUDA device". The result's "device" is
"cpu" or the GPU's name.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from attnlite_tools import lm  # noqa: E402
from torch_device import fp32_device  # noqa: E402


class CachedLM:
    def __init__(self, net, context, mv=True):
        self.net = net
        self.mv = mv
        self.device = dev = net.head.weight.device
        self.D = net.d_model
        l0 = net.layers[0]
        self.NH = l0.self_attn.num_heads
        self.dh = self.D // self.NH
        self.T = context
        self.scale = 1.0 / math.sqrt(self.dh)
        self.P = net.pos_encoding.P[0, :context].clone()
        L = len(net.layers)
        self.K = torch.zeros(L, self.NH, context, self.dh, device=dev)
        self.V = torch.zeros(L, self.NH, context, self.dh, device=dev)
        self.mask = lm.causal_mask(context, dev)
        self.emb_scale = math.sqrt(self.D)
        self.layers = [(l.self_attn.in_proj_weight, l.self_attn.in_proj_bias,
                        l.self_attn.out_proj.weight, l.self_attn.out_proj.bias, l.norm1,
                        l.linear1.weight, l.linear1.bias, l.linear2.weight, l.linear2.bias,
                        l.norm2) for l in net.layers]
        self.head = (net.head.weight, net.head.bias)

    def linear(self, x, w, b):
        """x (n, in) -> (n, out). One row goes through addmv (BLAS gemv): PyTorch 1.13's
        F.linear sends it to gemm, which with OpenBLAS packs the whole weight matrix at every
        call (the 9308 x 128 head: ~0.7 ms against ~0.1 ms for addmv, measured here)."""
        if self.mv and x.shape[0] == 1:
            return torch.addmv(b, w, x[0]).unsqueeze(0)
        return F.linear(x, w, b)

    def forward(self, ids, t0):
        """ids: (n,) int64 tensor at positions t0 .. t0 + n - 1 -> the last position's logits."""
        n, D, NH, dh = ids.shape[0], self.D, self.NH, self.dh
        t1 = t0 + n
        x = self.net.embedding(ids) * self.emb_scale + self.P[t0:t1]
        lin = self.linear
        for i, (w_in, b_in, w_o, b_o, norm1, w1, b1, w2, b2, norm2) in enumerate(self.layers):
            q, k, v = lin(x, w_in, b_in).view(n, 3, NH, dh).permute(1, 2, 0, 3)
            self.K[i, :, t0:t1] = k
            self.V[i, :, t0:t1] = v
            s = torch.matmul(q, self.K[i, :, :t1].transpose(1, 2)) * self.scale  # (NH, n, t1)
            if n > 1:
                s = s + self.mask[t0:t1, :t1]
            o = torch.matmul(torch.softmax(s, -1), self.V[i, :, :t1])  # (NH, n, dh)
            x = norm1(x + lin(o.transpose(0, 1).reshape(n, D), w_o, b_o))
            x = norm2(x + lin(F.relu(lin(x, w1, b1)), w2, b2))
        return lin(x[-1:], *self.head)[0]

    def generate(self, prompt, tokens, eos):
        z = self.forward(prompt, 0)
        t0 = prompt.shape[0]
        out = []
        while True:
            tok = int(torch.argmax(z))
            out.append(tok)
            if tok == eos or len(out) == tokens or t0 == self.T:
                return out
            z = self.forward(torch.tensor([tok], device=self.device), t0)
            t0 += 1


def check(cached, net, prompt, tokens, eos):
    """Largest |cached - full forward| logit difference over a greedy run, and its tokens."""
    seq = prompt.tolist()
    z = cached.forward(prompt, 0)
    t0 = len(seq)
    err, out = 0.0, []
    while True:
        ref = net(torch.tensor([seq], device=cached.device))[0, -1]
        err = max(err, (z - ref).abs().max().item())
        tok = int(torch.argmax(z))
        out.append(tok)
        if tok == eos or len(out) == tokens or t0 == cached.T:
            return err, out
        seq.append(tok)
        z = cached.forward(torch.tensor([tok], device=cached.device), t0)
        t0 += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--gens", type=int, default=4)
    ap.add_argument("--min-time", type=float, default=2.0)
    ap.add_argument("--min-runs", type=int, default=10)
    ap.add_argument("--grad-mode", choices=["inference", "no_grad"], default="inference")
    ap.add_argument("--linear", choices=["mv", "linear"], default="mv",
                    help="mv: addmv for single rows (default); linear: F.linear everywhere")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="cuda: the same workload on an NVIDIA GPU (fp32, TF32 off)")
    ap.add_argument("--label", default="pytorch")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    dev, sync = fp32_device(a.device, "peer_torch_lm")
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "lm.json")) as f:
        info = json.load(f)
    net, vocab, meta = lm.load_lm(os.path.join(a.dir, info["f32"]))
    net = net.to(dev).eval()
    eos = info["eos"]
    mode = torch.inference_mode if a.grad_mode == "inference" else torch.no_grad
    with mode():
        cached = CachedLM(net, meta["config"]["max_len"], mv=a.linear == "mv")
        prompt = torch.tensor(info["prompt_ids"], device=dev)
        err, ids = check(cached, net, prompt, a.tokens, eos)
        if err > 1e-5:
            sys.exit(f"peer_torch_lm: cached logits differ from the full forward by {err:.3g}")

        def workload():
            n = 0
            for _ in range(a.gens):
                n += len(cached.generate(prompt, a.tokens, eos))
            return n

        per_run = workload()
        sync()
        if cached.generate(prompt, a.tokens, eos) != ids:
            sys.exit("peer_torch_lm: the timed loop's tokens differ from the checked run's")
        walls, cpus = [], []
        start = time.perf_counter()
        while len(walls) < a.min_runs or time.perf_counter() - start < a.min_time:
            c0, w0 = time.process_time(), time.perf_counter()
            workload()
            sync()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    w, c = statistics.median(walls), statistics.median(cpus)
    blas = "openblas" if "openblas" in os.environ.get("LD_LIBRARY_PATH", "") else "reference"
    device = "cpu" if dev.type == "cpu" else torch.cuda.get_device_name(dev)
    res = {"peer": a.label, "torch": torch.__version__, "blas": blas, "device": device,
           "grad_mode": a.grad_mode, "linear": a.linear,
           "threads": torch.get_num_threads(), "gens": a.gens, "tokens": a.tokens,
           "tokens_per_run": per_run, "runs": len(walls), "wall_s": w, "min_wall_s": min(walls),
           "cpu_s": c, "tok_s": per_run / w, "cpu_tok_s": per_run / c,
           "max_abs_diff_vs_full_forward": err, "ids": info["prompt_ids"] + ids}
    line = json.dumps(res)
    print(line)
    if a.json:
        with open(a.json, "w") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
