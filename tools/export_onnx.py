#!/usr/bin/env python3
"""Export a shipped attnlite Transformer (models/*.safetensors) to ONNX for peer benchmarks.

Two graphs, and the greedy loop stays in the caller (bench/wasm_bench.mjs runs them with
onnxruntime-web):

  <out>-encoder.onnx   src (1, S) int64, valid_len (1,) int64
                       -> cross_k_<l>, cross_v_<l> (1, S, H) for each decoder layer l: the
                          encoder output projected once by that layer's W_k / W_v of the
                          encoder-decoder attention (attnlite does the same).
  <out>-decoder.onnx   one decoding step with the self-attention state as inputs/outputs:
                       token (1, 1) int64, position (1,) int64, valid_len (1,) int64,
                       cross_k_<l>, cross_v_<l>, past_k_<l>, past_v_<l> (1, t, H)
                       -> logits (1, V), present_k_<l>, present_v_<l> (1, t + 1, H)
                       i.e. a KV cache of the projected keys/values (the book re-projects
                       its cache of block inputs at every step; the results are the same).

The position input is t at step t (attnlite's default) or 0 at every step (the book's
predict_seq2seq, attnlite --d2l-compat). Attention weights are not outputs: the peer
decodes text only.

Usage: /usr/bin/python3 tools/export_onnx.py [--model models/transformer-d2l.safetensors]
                                             [--out build/onnx/transformer-d2l] [--check]
--check prints the greedy translations of the book's four sentences by the two exported
modules in PyTorch (bench/wasm_bench.mjs checks the ONNX graphs under onnxruntime-web
against attnlite, token for token).
Needs PyTorch (Debian: python3-torch) and its ONNX exporter (opset 14).
"""
import argparse
import json
import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import d2l_ref  # noqa: E402
import safetensors_io  # noqa: E402


def load_transformer(path):
    tensors, meta = safetensors_io.load(path)
    if meta.get("attnlite.kind") != "transformer":
        raise SystemExit(f"{path}: not a Transformer (attnlite.kind = {meta.get('attnlite.kind')})")
    cfg = json.loads(meta["attnlite.config"])
    net = d2l_ref.make_transformer(cfg["src_vocab_size"], cfg["tgt_vocab_size"], cfg["num_hiddens"],
                                   cfg["num_layers"], cfg["num_heads"], cfg["ffn_num_hiddens"], dropout=0.0)
    net.load_state_dict({k: torch.as_tensor(v) for k, v in tensors.items()})
    net.eval()
    return net, cfg, meta


def heads(x, nh):  # (1, T, H) -> (nh, T, H / nh)
    return d2l_ref.transpose_qkv(x, nh)


def attend(q, k, v, nh, valid_len=None):
    """Scaled dot-product attention over heads; keys beyond valid_len masked with -1e6."""
    qh, kh, vh = heads(q, nh), heads(k, nh), heads(v, nh)
    scores = torch.bmm(qh, kh.transpose(1, 2)) / math.sqrt(qh.shape[-1])
    if valid_len is not None:
        keep = torch.arange(kh.shape[1])[None, None, :] < valid_len[:, None, None]
        scores = torch.where(keep, scores, torch.full_like(scores, -1e6))
    return d2l_ref.transpose_output(torch.bmm(torch.softmax(scores, dim=-1), vh), nh)


def mha(att, q, k, v, nh, valid_len=None):
    """d2l's MultiHeadAttention with the same weights, in exportable operations (the book's
    masking uses repeat_interleave and in-place writes, which the exporter refuses)."""
    return att.W_o(attend(att.W_q(q), att.W_k(k), att.W_v(v), nh, valid_len))


class Encoder(nn.Module):
    def __init__(self, net, cfg):
        super().__init__()
        self.enc, self.dec, self.nh, self.H = net.encoder, net.decoder, cfg["num_heads"], cfg["num_hiddens"]

    def forward(self, src, valid_len):
        P = self.enc.pos_encoding.P[0, :src.shape[1]]
        x = self.enc.embedding(src) * math.sqrt(self.H) + P[None]
        for blk in self.enc.blks:
            y = blk.addnorm1(x, mha(blk.attention, x, x, x, self.nh, valid_len))
            x = blk.addnorm2(y, blk.ffn(y))
        out = []
        for blk in self.dec.blks:
            out += [blk.attention2.W_k(x), blk.attention2.W_v(x)]
        return tuple(out)


class DecoderStep(nn.Module):
    def __init__(self, net, cfg):
        super().__init__()
        self.dec, self.nh, self.H = net.decoder, cfg["num_heads"], cfg["num_hiddens"]

    def forward(self, token, position, valid_len, *state):
        L = len(self.dec.blks)
        cross, past = state[:2 * L], state[2 * L:]
        P = self.dec.pos_encoding.P[0]  # (max_len, H)
        x = self.dec.embedding(token) * math.sqrt(self.H) + P[position][None]
        present = []
        for i, blk in enumerate(self.dec.blks):
            a1 = blk.attention1
            k = torch.cat([past[2 * i], a1.W_k(x)], dim=1)
            v = torch.cat([past[2 * i + 1], a1.W_v(x)], dim=1)
            present += [k, v]
            y = blk.addnorm1(x, a1.W_o(attend(a1.W_q(x), k, v, self.nh)))
            a2 = blk.attention2
            z = blk.addnorm2(y, a2.W_o(attend(a2.W_q(y), cross[2 * i], cross[2 * i + 1], self.nh, valid_len)))
            x = blk.addnorm3(z, blk.ffn(z))
        return (self.dec.dense(x)[:, 0, :], *present)


def export(net, cfg, out):
    L, H, S = cfg["num_layers"], cfg["num_hiddens"], cfg["num_steps"]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    src = torch.zeros((1, S), dtype=torch.long)
    vl = torch.tensor([S], dtype=torch.long)
    cross_names = [f"cross_{kv}_{l}" for l in range(L) for kv in "kv"]
    torch.onnx.export(Encoder(net, cfg), (src, vl), out + "-encoder.onnx", opset_version=14,
                      input_names=["src", "valid_len"], output_names=cross_names)
    cross = [torch.zeros((1, S, H)) for _ in cross_names]
    past = [torch.zeros((1, 1, H)) for _ in range(2 * L)]
    past_names = [f"past_{kv}_{l}" for l in range(L) for kv in "kv"]
    present_names = [f"present_{kv}_{l}" for l in range(L) for kv in "kv"]
    dyn = {n: {1: "past"} for n in past_names}
    dyn.update({n: {1: "present"} for n in present_names})
    torch.onnx.export(DecoderStep(net, cfg), (torch.zeros((1, 1), dtype=torch.long), torch.tensor([0]), vl, *cross, *past),
                      out + "-decoder.onnx", opset_version=14,
                      input_names=["token", "position", "valid_len", *cross_names, *past_names],
                      output_names=["logits", *present_names], dynamic_axes=dyn)
    with open(out + ".json", "w") as f:
        json.dump({"config": cfg, "cross": cross_names, "past": past_names, "present": present_names}, f, indent=1)


def greedy(enc, dec, src_ids, valid, cfg, bos, eos, d2l_compat=False):
    """The greedy loop over the exported modules (what the JS bench does with ORT)."""
    L, H, S = cfg["num_layers"], cfg["num_hiddens"], cfg["num_steps"]
    vl = torch.tensor([valid])
    cross = enc(torch.tensor([src_ids]), vl)
    past = [torch.zeros((1, 0, H)) for _ in range(2 * L)]
    tok, out = bos, []
    for t in range(S):
        logits, *past = dec(torch.tensor([[tok]]), torch.tensor([0 if d2l_compat else t]), vl, *cross, *past)
        tok = int(logits.argmax(-1))
        if tok == eos:
            break
        out.append(tok)
    return out


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(root, "models", "transformer-d2l.safetensors"))
    ap.add_argument("--out", default=os.path.join(root, "build", "onnx", "transformer-d2l"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    net, cfg, meta = load_transformer(a.model)
    with torch.no_grad():
        export(net, cfg, a.out)
    print(f"wrote {a.out}-encoder.onnx, {a.out}-decoder.onnx, {a.out}.json")
    if a.check:
        src_vocab = json.loads(meta["attnlite.src_vocab"])
        tgt_vocab = json.loads(meta["attnlite.tgt_vocab"])
        s_idx = {t: i for i, t in enumerate(src_vocab)}
        S = cfg["num_steps"]
        for sentence in ["go .", "i lost .", "he's calm .", "i'm home ."]:
            ids = [s_idx.get(w, 0) for w in sentence.split(" ")] + [s_idx["<eos>"]]
            valid = len(ids)
            ids = (ids + [s_idx["<pad>"]] * S)[:S]
            with torch.no_grad():
                got = greedy(Encoder(net, cfg), DecoderStep(net, cfg), ids, valid, cfg, tgt_vocab.index("<bos>"),
                             tgt_vocab.index("<eos>"))
            print(f"{sentence} => {' '.join(tgt_vocab[i] for i in got)}")


if __name__ == "__main__":
    main()
