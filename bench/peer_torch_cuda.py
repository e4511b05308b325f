"""PyTorch CUDA peer of bench/bench_cuda.cpp: greedy decoding throughput of a base-size
Transformer with a key/value cache, in fp32 with TF32 off.

    /usr/bin/python3 bench/peer_torch_cuda.py [--batch 1,32] [--steps 64] [--reps 5]
        [--mode eager,graphs] [--device cuda] [--json OUT] [--check] [--small] [--threads 1]

The model is the d2l Transformer (book 10.7, post-norm) written out as functions over a
state_dict with the d2l names: num_hiddens 512, 6 encoder + 6 decoder layers, 8 heads, ffn
2048, source and target vocabularies of 32000, random weights from a fixed torch seed
(uniform(-1/sqrt(in), 1/sqrt(in)) for linears, uniform(-1, 1) for embeddings, LayerNorm 1/0).
Sources are 20 words + <eos> (num_steps 21), different per row. Matmuls run in fp32 with
TF32 off (torch.backends.cuda.matmul.allow_tf32, cudnn.allow_tf32, matmul precision
"highest").

Both modes are greedy with a key/value cache: the encoder once, the cross-attention keys and
values of every decoder layer projected once per batch, then one decoder step per token on
the previous step's argmax, kept on the device (step t adds the positional encoding P[t]):
  eager   each step appends the new position's keys/values to the self-attention cache
          (torch.cat) and attends over the cached prefix; torch.inference_mode().
  graphs  the step is captured once per batch size with torch.cuda.CUDAGraph over static
          tensors: input ids, a position tensor on the device, a cache preallocated as
          (layers, B, heads, steps, head_dim) written at the position with index_copy_,
          attention over every slot with the mask arange(steps) <= t; the step writes its
          argmax into the input ids and advances the position, so decoding is `steps`
          replays with no host round trip; torch.no_grad(). On a CPU device the same step
          runs uncaptured (row mode "static").

Each batch size is timed with 1 decoder step and with N (the encoder included, the device
synchronized before the clock is read), median of --reps runs after a warm-up:
    decode tokens/s = batch * (N - 1) / (t_N - t_1)

--check runs on the CPU with a small config (H 32, 2 layers, 4 heads, ffn 64, vocab 50) on 3
sources of different valid lengths for 8 steps: the eager and static decoders must give the
same greedy tokens as the book's model (tools/attnlite_tools/d2l, positions_from_cache,
search.greedy_decode) loaded with the same weights, and logits within 1e-5. With --device
cuda it runs there, the captured graph included. --small times the check config (a quick
CPU run: --device cpu --small); --threads sets torch's CPU threads (default 1).
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

from torch_device import fp32_device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BASE = dict(H=512, L=6, NH=8, F=2048, V=32000, src_words=20)
SMALL = dict(H=32, L=2, NH=4, F=64, V=50, src_words=5)
PAD, BOS, EOS = 1, 2, 3
SEED = 0


# --------------------------------------------------------------------------------------
# Weights and inputs
# --------------------------------------------------------------------------------------


def weight_shapes(c):
    """(name, shape, init) in d2l state_dict order; init > 0: uniform(-init, init),
    'ones' / 'zeros' for LayerNorm."""
    H, F_, V = c["H"], c["F"], c["V"]
    out = []

    def linear(p, o, i, bias):
        out.append((p + ".weight", (o, i), 1.0 / math.sqrt(i)))
        if bias:
            out.append((p + ".bias", (o,), 1.0 / math.sqrt(i)))

    def mha(p):
        for w in ("W_q", "W_k", "W_v", "W_o"):
            linear(p + w, H, H, False)

    def norm(p):
        out.append((p + "ln.weight", (H,), "ones"))
        out.append((p + "ln.bias", (H,), "zeros"))

    def ffn(p):
        linear(p + "ffn.dense1", F_, H, True)
        linear(p + "ffn.dense2", H, F_, True)

    out.append(("encoder.embedding.weight", (V, H), 1.0))
    for l in range(c["L"]):
        p = f"encoder.blks.block{l}."
        mha(p + "attention.")
        norm(p + "addnorm1.")
        ffn(p)
        norm(p + "addnorm2.")
    out.append(("decoder.embedding.weight", (V, H), 1.0))
    for l in range(c["L"]):
        p = f"decoder.blks.block{l}."
        mha(p + "attention1.")
        norm(p + "addnorm1.")
        mha(p + "attention2.")
        norm(p + "addnorm2.")
        ffn(p)
        norm(p + "addnorm3.")
    linear("decoder.dense", V, H, True)
    return out


def random_weights(c, device):
    g = torch.Generator().manual_seed(SEED)
    W = {}
    for name, shape, init in weight_shapes(c):
        if init == "ones":
            t = torch.ones(shape)
        elif init == "zeros":
            t = torch.zeros(shape)
        else:
            t = (torch.rand(shape, generator=g) * 2 - 1) * init
        W[name] = t.to(device)
    return W


def positional_table(H, max_len):
    """The book's P (10.6): P[pos, 2i] = sin(pos / 10000^(2i/H)), P[pos, 2i+1] = cos(...)."""
    P = torch.zeros((max_len, H))
    X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
        10000, torch.arange(0, H, 2, dtype=torch.float32) / H)
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X)
    return P


def sources(c, B, device):
    """B sources of src_words words + <eos>, different per row (bench_cuda's ids)."""
    V, S = c["V"], c["src_words"]
    rows = [[4 + (b * 7919 + k * 104729) % (V - 4) for k in range(S)] + [EOS] for b in range(B)]
    src = torch.tensor(rows, dtype=torch.long, device=device)
    return src, torch.full((B,), S + 1, dtype=torch.long, device=device)


# --------------------------------------------------------------------------------------
# The d2l Transformer as functions
# --------------------------------------------------------------------------------------


class Model:
    def __init__(self, c, W, device, max_len=1000):
        self.c, self.W, self.device = c, W, device
        self.H, self.L, self.NH = c["H"], c["L"], c["NH"]
        self.P = positional_table(self.H, max_len).to(device)
        self.scale = math.sqrt(self.H)

    def ln(self, p, x):
        return F.layer_norm(x, (self.H,), self.W[p + "ln.weight"], self.W[p + "ln.bias"], 1e-5)

    def ffn(self, p, x):
        W = self.W
        h = F.relu(F.linear(x, W[p + "ffn.dense1.weight"], W[p + "ffn.dense1.bias"]))
        return F.linear(h, W[p + "ffn.dense2.weight"], W[p + "ffn.dense2.bias"])

    def heads(self, x):
        """(B, T, H) -> (B, NH, T, H / NH)."""
        B, T, _ = x.shape
        return x.reshape(B, T, self.NH, -1).transpose(1, 2)

    def proj(self, p, w, x):
        return self.heads(F.linear(x, self.W[p + w + ".weight"]))

    def attend(self, p, q, k, v, masked):
        """Scaled dot product over heads, masked scores set to -1e6 (d2l's masked_softmax),
        then W_o. masked: bool, True where a key is hidden, broadcast to the scores."""
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if masked is not None:
            s = s.masked_fill(masked, -1e6)
        o = torch.softmax(s, dim=-1) @ v
        B, _, T, _ = o.shape
        return F.linear(o.transpose(1, 2).reshape(B, T, self.H), self.W[p + "W_o.weight"])

    def src_mask(self, valid_len, S):
        """(B, 1, 1, S), True beyond each source's valid length."""
        slots = torch.arange(S, device=valid_len.device)
        return (slots[None, :] >= valid_len[:, None])[:, None, None]

    def encode(self, src, valid_len):
        S = src.shape[1]
        x = F.embedding(src, self.W["encoder.embedding.weight"]) * self.scale + self.P[:S]
        mask = self.src_mask(valid_len, S)
        for l in range(self.L):
            p = f"encoder.blks.block{l}."
            a = p + "attention."
            y = self.ln(p + "addnorm1.", x + self.attend(
                a, self.proj(a, "W_q", x), self.proj(a, "W_k", x), self.proj(a, "W_v", x), mask))
            x = self.ln(p + "addnorm2.", y + self.ffn(p, y))
        return x

    def cross_kv(self, enc):
        """Every decoder layer's cross-attention keys and values, (L, B, NH, S, dh) each."""
        ks, vs = [], []
        for l in range(self.L):
            a = f"decoder.blks.block{l}.attention2."
            ks.append(self.proj(a, "W_k", enc))
            vs.append(self.proj(a, "W_v", enc))
        return torch.stack(ks), torch.stack(vs)

    def block_tail(self, l, x, y_self, ck, cv, smask):
        """AddNorm after self-attention, cross-attention, AddNorm, FFN, AddNorm."""
        p = f"decoder.blks.block{l}."
        y = self.ln(p + "addnorm1.", x + y_self)
        a = p + "attention2."
        y2 = self.attend(a, self.proj(a, "W_q", y), ck[l], cv[l], smask)
        z = self.ln(p + "addnorm2.", y + y2)
        return self.ln(p + "addnorm3.", z + self.ffn(p, z))

    def embed_step(self, ids, pe):
        return (F.embedding(ids, self.W["decoder.embedding.weight"]) * self.scale + pe)[:, None]

    def logits(self, x):
        return F.linear(x[:, 0], self.W["decoder.dense.weight"], self.W["decoder.dense.bias"])


# --------------------------------------------------------------------------------------
# Eager decoding: the self-attention cache grows by one position per step
# --------------------------------------------------------------------------------------


def eager_step(m, ids, t, cache, ck, cv, smask):
    x = m.embed_step(ids, m.P[t])
    for l in range(m.L):
        a = f"decoder.blks.block{l}.attention1."
        k, v = m.proj(a, "W_k", x), m.proj(a, "W_v", x)
        if cache[l] is not None:
            k, v = torch.cat((cache[l][0], k), 2), torch.cat((cache[l][1], v), 2)
        cache[l] = (k, v)
        x = m.block_tail(l, x, m.attend(a, m.proj(a, "W_q", x), k, v, None), ck, cv, smask)
    return m.logits(x)


def eager_decode(m, src, valid_len, steps, on_step=None):
    """Greedy tokens (B, steps); on_step(t, logits) sees each step's logits."""
    ck, cv = m.cross_kv(m.encode(src, valid_len))
    smask = m.src_mask(valid_len, src.shape[1])
    ids = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)
    cache = [None] * m.L
    toks = []
    for t in range(steps):
        y = eager_step(m, ids, t, cache, ck, cv, smask)
        ids = y.argmax(dim=-1)
        toks.append(ids)
        if on_step is not None:
            on_step(t, y)
    return torch.stack(toks, 1)


# --------------------------------------------------------------------------------------
# Static decoding: every tensor the step touches is preallocated (what a CUDA graph needs)
# --------------------------------------------------------------------------------------


class Static:
    """Static buffers for batch B, T decoder steps and sources of S tokens."""

    def __init__(self, m, B, T, S):
        dev, L, NH, dh = m.device, m.L, m.NH, m.H // m.NH
        self.m, self.T = m, T
        self.ids = torch.full((B,), BOS, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.slots = torch.arange(T, device=dev)
        self.K = torch.zeros(L, B, NH, T, dh, device=dev)
        self.V = torch.zeros(L, B, NH, T, dh, device=dev)
        self.ck = torch.zeros(L, B, NH, S, dh, device=dev)
        self.cv = torch.zeros(L, B, NH, S, dh, device=dev)
        self.smask = torch.zeros(B, 1, 1, S, dtype=torch.bool, device=dev)
        self.logits = torch.zeros(B, m.c["V"], device=dev)
        self.tokens = torch.zeros(B, T, dtype=torch.long, device=dev)
        self.graph = None

    def start(self, src, valid_len):
        """Encoder, cross keys/values into the static buffers, position 0, <bos>."""
        m = self.m
        ck, cv = m.cross_kv(m.encode(src, valid_len))
        self.ck.copy_(ck)
        self.cv.copy_(cv)
        self.smask.copy_(m.src_mask(valid_len, src.shape[1]))
        self.ids.fill_(BOS)
        self.pos.zero_()

    def step(self):
        """One decoder step at position pos: logits, argmax into ids and tokens, pos += 1."""
        m = self.m
        x = m.embed_step(self.ids, m.P.index_select(0, self.pos))
        hidden = (self.slots > self.pos)[None, None, None]  # attend where arange(T) <= t
        for l in range(m.L):
            a = f"decoder.blks.block{l}.attention1."
            self.K[l].index_copy_(2, self.pos, m.proj(a, "W_k", x))
            self.V[l].index_copy_(2, self.pos, m.proj(a, "W_v", x))
            y = m.attend(a, m.proj(a, "W_q", x), self.K[l], self.V[l], hidden)
            x = m.block_tail(l, x, y, self.ck, self.cv, self.smask)
        self.logits.copy_(m.logits(x))
        nxt = self.logits.argmax(dim=-1)
        self.tokens.index_copy_(1, self.pos, nxt[:, None])
        self.ids.copy_(nxt)
        self.pos.add_(1)

    def capture(self):
        """Capture step() as a CUDA graph (warm-up on a side stream first)."""
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.pos.zero_()
                self.step()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.step()
        torch.cuda.synchronize()
        self.pos.zero_()
        self.ids.fill_(BOS)

    def run(self, src, valid_len, steps, on_step=None):
        self.start(src, valid_len)
        for t in range(steps):
            if self.graph is not None:
                self.graph.replay()
            else:
                self.step()
            if on_step is not None:
                on_step(t, self.logits)
        return self.tokens[:, :steps]


# --------------------------------------------------------------------------------------
# Check against the book's model
# --------------------------------------------------------------------------------------


def book_model(c, W, device):
    """The book's Transformer (tools/attnlite_tools/d2l) with the weights W, and its greedy
    loop (search.greedy_decode)."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from attnlite_tools import d2l
    from attnlite_tools.search import greedy_decode

    net = d2l.make_transformer(c["V"], c["V"], num_hiddens=c["H"], num_layers=c["L"],
                               num_heads=c["NH"], ffn_num_hiddens=c["F"], dropout=0.0,
                               positions_from_cache=True)
    net.load_state_dict({k: v.cpu() for k, v in W.items()}, strict=True)
    return net.to(device).eval(), greedy_decode


def check_sources(c, device):
    """3 sources of src_words, 3 and 1 words + <eos>, padded to src_words + 1."""
    S = c["src_words"] + 1
    rows, lens = [], []
    for b, n in enumerate((c["src_words"], 3, 1)):
        ids = [4 + (b * 13 + k * 7) % (c["V"] - 4) for k in range(n)] + [EOS]
        lens.append(len(ids))
        rows.append(ids + [PAD] * (S - len(ids)))
    return (torch.tensor(rows, dtype=torch.long, device=device),
            torch.tensor(lens, dtype=torch.long, device=device))


def collect(store):
    return lambda t, y: store.append(y.detach().clone())


def check(device, steps=8):
    c = SMALL
    W = random_weights(c, device)
    net, greedy_decode = book_model(c, W, device)
    m = Model(c, W, device)
    src, vl = check_sources(c, device)
    runs = {}
    with torch.no_grad():
        ref_logits = []
        ref = greedy_decode(net, src, vl, BOS, steps,
                            on_step=lambda t, y: ref_logits.append(y[:, 0].clone()))
        got = []
        runs["eager (KV cache)"] = (eager_decode(m, src, vl, steps, collect(got)), got)
        st = Static(m, src.shape[0], steps, src.shape[1])
        got = []
        runs["static cache, uncaptured"] = (st.run(src, vl, steps, collect(got)).clone(), got)
        if device.type == "cuda":
            st.capture()
            got = []
            runs["static cache, CUDA graph"] = (st.run(src, vl, steps, collect(got)).clone(), got)
    print(f"check: small Transformer H {c['H']}, {c['L']}+{c['L']} layers, {c['NH']} heads, "
          f"ffn {c['F']}, vocab {c['V']}; {src.shape[0]} sources, valid lengths {vl.tolist()}, "
          f"{steps} greedy steps on {device}")
    print(f"  book (d2l, positions_from_cache) tokens: {ref.tolist()}")
    ok = True
    for name, (toks, logits) in runs.items():
        same = torch.equal(toks.cpu(), ref.cpu())
        diff = max(float((a - b).abs().max()) for a, b in zip(logits, ref_logits))
        good = same and diff <= 1e-5
        ok &= good
        print(f"  {name}: tokens {'identical' if same else 'DIFFER ' + str(toks.tolist())}, "
              f"max |logit diff| {diff:.2e} {'ok' if good else 'FAIL'}")
    print("check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


def median_time(fn, reps, sync):
    fn()
    sync()
    ts = []
    for _ in range(reps):
        sync()
        a = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - a)
    return statistics.median(ts)


def time_mode(m, mode, B, steps, reps, sync):
    src, vl = sources(m.c, B, m.device)
    if mode == "eager":
        def run(n):
            with torch.inference_mode():
                eager_decode(m, src, vl, n)
    else:
        with torch.no_grad():
            st = Static(m, B, steps, src.shape[1])
            if m.device.type == "cuda":
                st.capture()

        def run(n):
            with torch.no_grad():
                st.run(src, vl, n)
    t1 = median_time(lambda: run(1), reps, sync)
    tN = median_time(lambda: run(steps), reps, sync)
    tps = B * (steps - 1) / (tN - t1) if tN > t1 else 0.0
    return {"mode": mode, "batch": B, "steps": steps, "t1_ms": t1 * 1e3, "tN_ms": tN * 1e3,
            "decode_tokens_per_s": tps}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mode", default="eager,graphs")
    ap.add_argument("--device", default=None, help="cuda (default; cpu for --check)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--json", default=None)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--small", action="store_true", help="time the --check config")
    a = ap.parse_args()
    a.batch = [int(b) for b in a.batch.split(",")]
    a.mode = a.mode.split(",")
    if a.steps < 2 or a.reps < 1 or any(mo not in ("eager", "graphs") for mo in a.mode):
        ap.error("--steps must be >= 2, --reps >= 1, --mode from eager,graphs")
    return a


def main():
    a = parse_args()
    torch.set_num_threads(a.threads)
    device, sync = fp32_device(a.device or ("cpu" if a.check else "cuda"), "peer_torch_cuda")
    if a.check:
        return check(device)

    c = SMALL if a.small else BASE
    cuda = device.type == "cuda"
    name = torch.cuda.get_device_name(device) if cuda else f"CPU, {torch.get_num_threads()} threads"
    m = Model(c, random_weights(c, device), device, max_len=max(1000, a.steps))
    print(f"# Transformer: H {c['H']}, {c['L']}+{c['L']} layers, {c['NH']} heads, ffn {c['F']}, "
          f"vocab {c['V']}, source {c['src_words']} words")
    print(f"# PyTorch {torch.__version__}, {name}; fp32, TF32 off; median of {a.reps}")
    print("| mode | batch | steps | encoder+1 step ms | full ms | decode tokens/s |")
    print("|---|---|---|---|---|---|")
    rows = []
    for mode in a.mode:
        for B in a.batch:
            r = time_mode(m, mode, B, a.steps, a.reps, sync)
            if mode == "graphs" and not cuda:
                r["mode"] = "static"
            rows.append(r)
            print(f"| {r['mode']} | {B} | {r['steps']} | {r['t1_ms']:.3f} | {r['tN_ms']:.3f} | "
                  f"{r['decode_tokens_per_s']:.0f} |", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": name, "torch": torch.__version__, "config": c, "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
