"""The language model's benchmark files: the weights every runtime reads, the ONNX graph with
past keys/values for onnxruntime-node, and the expected greedy tokens (bench/lm.sh).

    /usr/bin/python3 tools/export_lm_bench.py MODEL.safetensors OUT_DIR [--prompt TEXT]
        [--tokens 16] [--keep-eos]

MODEL is the shipped int8 file (models/lm-fra.safetensors). OUT_DIR receives

  lm.int8.safetensors  MODEL with one change: head.bias[<eos>] = -1e4 (a float32 entry;
                       every int8 weight and scale stays as it is), so that greedy decoding
                       never picks <eos> and every generation has the same length. The trained
                       model ends its sentences after 2-8 tokens; without this change there is
                       no 7-word prompt whose greedy continuation is 16 tokens long. The work
                       per token is unchanged: all 9308 logits are still computed. (With
                       --keep-eos the bias is left alone.)
  lm.f32.safetensors   the same weights in float32: scale * q for every int8 matrix
                       (quantize.dequantize), the biases and norms as they are. attnlite's fp32
                       run, the PyTorch peer and the ONNX graph all read these numbers.
  lm.onnx              one graph for the prompt and for every step (opset 14, float32):
                         input_ids (1, n) int64, past_k, past_v (L, 1, NH, P, dh) float32
                         -> logits (1, V) of the last position (the next token's),
                            present_k, present_v (L, 1, NH, P + n, dh)
                       positions P .. P + n - 1, causal within the n new tokens; n and P are
                       dynamic (the prompt: n = 8, P = 0; a step: n = 1, P = 8 ..).
  lm.json              config, vocabulary size, the prompt (text and ids: <bos> + 7 words),
                       <eos>, and the expected greedy tokens of one generation, computed by the
                       full forward pass of lm.DecoderOnlyLM (no cache) over the whole sequence
                       at every step.

Checks before writing: the graph module's logits equal DecoderOnlyLM's full forward within
1e-5 at every step of the greedy run, and the margin between the two largest logits at each
step is reported (a near-tie could let float rounding pick another token in one runtime).
"""
import argparse
import json
import math
import os

import torch
from torch import nn

from . import d2l
from . import lm
from . import quantize
from . import safetensors as st

PROMPT = "il me semble que je commence à"  # 7 words, all in the vocabulary: 8 input tokens
EOS_BIAS = -1e4


def bench_files(model, out_dir, keep_eos=False):
    """Writes lm.int8.safetensors and lm.f32.safetensors (see above); returns their paths."""
    tensors, meta = st.load(model)
    vocab = json.loads(meta["attnlite.vocab"])
    eos = vocab.index("<eos>")
    if not keep_eos:
        bias = tensors["head.bias"].clone()
        bias[eos] = EOS_BIAS
        tensors["head.bias"] = bias
        meta = dict(meta)
        meta["attnlite.bench"] = (f"benchmark copy of {os.path.basename(model)}: "
                                  f"head.bias[{eos}] (<eos>) = {EOS_BIAS:g}")
    i8 = os.path.join(out_dir, "lm.int8.safetensors")
    f32 = os.path.join(out_dir, "lm.f32.safetensors")
    st.save(i8, tensors, meta)
    meta32 = {k: v for k, v in meta.items() if k != "attnlite.quantization"}
    st.save(f32, quantize.dequantize(tensors), meta32)
    return i8, f32


class LMGraph(nn.Module):
    """DecoderOnlyLM with a key/value cache, written with tensors only (exportable): the
    layers' own weights (in_proj split into q/k/v, out_proj, norm1/2, linear1/2), the head on
    the last position."""

    def __init__(self, net, context):
        super().__init__()
        self.net = net
        l0 = net.layers[0]
        self.D = net.d_model
        self.NH = l0.self_attn.num_heads
        self.dh = self.D // self.NH
        self.act = l0.activation  # F.relu (or F.gelu)
        self.register_buffer("P", net.pos_encoding.P[0, :context].clone())

    def forward(self, input_ids, past_k, past_v):
        D, NH, dh = self.D, self.NH, self.dh
        n = input_ids.shape[1]
        P0 = past_k.shape[3]
        pos = torch.arange(n) + P0
        x = self.net.embedding(input_ids[0]) * math.sqrt(D) + self.P.index_select(0, pos)
        # key j is visible to new query i when j <= P0 + i
        keep = torch.arange(n + P0).unsqueeze(0) <= pos.unsqueeze(1)  # (n, P0 + n)
        mask = torch.zeros(keep.shape).masked_fill(~keep, float("-inf"))
        ks, vs = [], []
        for i, layer in enumerate(self.net.layers):
            a = layer.self_attn
            qkv = nn.functional.linear(x, a.in_proj_weight, a.in_proj_bias)  # (n, 3D)
            q, k, v = qkv.reshape(n, 3, NH, dh).permute(1, 2, 0, 3)  # each (NH, n, dh)
            k = torch.cat([past_k[i, 0], k], 1)
            v = torch.cat([past_v[i, 0], v], 1)
            ks.append(k)
            vs.append(v)
            s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(dh) + mask
            o = torch.matmul(torch.softmax(s, -1), v)  # (NH, n, dh)
            o = a.out_proj(o.permute(1, 0, 2).reshape(n, D))
            x = layer.norm1(x + o)
            x = layer.norm2(x + layer.linear2(self.act(layer.linear1(x))))
        logits = self.net.head(x[n - 1:])  # (1, V)
        return logits, torch.stack(ks).unsqueeze(1), torch.stack(vs).unsqueeze(1)


def empty_cache(net):
    L, NH = len(net.layers), net.layers[0].self_attn.num_heads
    return torch.zeros(L, 1, NH, 0, net.d_model // NH)


@torch.no_grad()
def reference_greedy(net, ids, tokens, eos):
    """Greedy tokens by the full forward pass (no cache), the logits of each step, and the
    margin between the two largest logits of each step."""
    seq, out, logits, margins = list(ids), [], [], []
    for _ in range(tokens):
        z = net(torch.tensor([seq]))[0, -1]
        top = z.topk(2)
        t = int(top.indices[0])
        out.append(t)
        logits.append(z)
        margins.append(float(top.values[0] - top.values[1]))
        if t == eos:
            break
        seq.append(t)
    return out, logits, margins


@torch.no_grad()
def check_graph(g, net, ids, ref_tokens, ref_logits):
    """Runs the graph module as the ORT loop does (prompt, then one token per step); returns
    the largest absolute difference from the full forward's logits."""
    err = 0.0
    pk = pv = empty_cache(net)
    x = torch.tensor([ids])
    for t, z in zip(ref_tokens, ref_logits):
        lg, pk, pv = g(x, pk, pv)
        err = max(err, (lg[0] - z).abs().max().item())
        if int(lg[0].argmax()) != t:
            raise AssertionError("graph: greedy token differs from the full forward")
        x = torch.tensor([[t]])
    return err


def export(model, out_dir, prompt=PROMPT, tokens=16, keep_eos=False):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    i8, f32 = bench_files(model, out_dir, keep_eos)
    net, vocab, info = lm.load_lm(f32)
    cfg = info["config"]
    words = d2l.preprocess_nmt(prompt).split(" ")
    ids = [vocab["<bos>"]] + [vocab[w] for w in words]
    if vocab["<unk>"] in ids[1:]:
        raise SystemExit(f"prompt {prompt!r}: a word is not in the vocabulary")
    eos = vocab["<eos>"]
    if len(ids) + tokens - 1 > cfg["max_len"]:
        raise SystemExit(f"{len(ids)} + {tokens} - 1 positions do not fit the context {cfg['max_len']}")
    ref, ref_logits, margins = reference_greedy(net, ids, tokens, eos)
    g = LMGraph(net, cfg["max_len"]).eval()
    err = check_graph(g, net, ids, ref, ref_logits)
    if err > 1e-5:
        raise AssertionError(f"graph logits differ from the full forward by {err:.3g} (> 1e-5)")
    with torch.no_grad():
        pk = torch.zeros(len(net.layers), 1, g.NH, 2, g.dh)
        torch.onnx.export(g, (torch.tensor([[5, 6, 7]]), pk, pk.clone()),
                          os.path.join(out_dir, "lm.onnx"), opset_version=14,
                          input_names=["input_ids", "past_k", "past_v"],
                          output_names=["logits", "present_k", "present_v"],
                          dynamic_axes={"input_ids": {1: "n"}, "past_k": {3: "P"},
                                        "past_v": {3: "P"}, "present_k": {3: "Pn"},
                                        "present_v": {3: "Pn"}})
    doc = {"config": cfg, "prompt": prompt, "prompt_ids": ids, "eos": eos,
           "eos_suppressed": not keep_eos, "tokens": tokens, "expected": ref,
           "expected_text": " ".join(vocab.idx_to_token[t] for t in ref),
           "min_margin": min(margins), "graph_max_abs_diff": err,
           "int8": os.path.basename(i8), "f32": os.path.basename(f32), "onnx": "lm.onnx",
           "source": os.path.abspath(model)}
    with open(os.path.join(out_dir, "lm.json"), "w") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return doc


def main():
    """tools/export_lm_bench.py"""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--tokens", type=int, default=16, help="tokens of one generation")
    ap.add_argument("--keep-eos", action="store_true", help="leave the <eos> bias alone")
    a = ap.parse_args()
    torch.set_num_threads(1)
    doc = export(a.model, a.out_dir, a.prompt, a.tokens, a.keep_eos)
    print(f"{a.out_dir}: lm.int8/f32.safetensors, lm.onnx, lm.json; prompt ids {doc['prompt_ids']}")
    print(f"expected ({len(doc['expected'])} tokens): {doc['expected_text']}  {doc['expected']}")
    print(f"graph vs full forward: max |logit diff| {doc['graph_max_abs_diff']:.3g}; "
          f"smallest top-2 margin {doc['min_margin']:.4f}")
