"""Export an attnlite Transformer or Bahdanau model to two ONNX graphs for peer benchmarks.

For bench/peer_ort.mjs (onnxruntime-node, bench/run.sh): any batch size, both model kinds,
the state stacked over layers. tools/export_onnx.py is the batch-1 Transformer export that
bench/wasm_bench.mjs runs under onnxruntime-web.

    /usr/bin/python3 tools/export_onnx_peers.py MODEL.safetensors OUT_DIR [--name NAME]

writes OUT_DIR/NAME.encoder.onnx, OUT_DIR/NAME.decoder_step.onnx and OUT_DIR/NAME.json
(config, vocabularies and the graphs' input/output names) for bench/peer_ort.mjs.
Opset 14, float32, dynamic batch (and, for the Transformer, a dynamic cache length).

Transformer (the same math as the d2l modules, in eval mode, with a KV cache):
  encoder       src (B, S) int64, valid_len (B) int64
                -> cross_k, cross_v (L, B, S, H): W_k / W_v of each decoder block's
                   encoder-decoder attention applied to the encoder output (done once)
  decoder_step  token (B) int64, pos (1) int64, self_k, self_v (L, B, t, H),
                cross_k, cross_v (L, B, S, H), valid_len (B) int64
                -> logits (B, V), new_self_k, new_self_v (L, B, t + 1, H)
  The self-attention state holds the projected keys and values of the decoded steps (the
  book's state[2] keeps the block inputs and re-projects them at every step; projecting
  once is the same arithmetic, less work). pos is the position whose encoding is added:
  t at step t (attnlite's default) or 0 at every step (the book, --d2l-compat).

Bahdanau (the book's GRU encoder and Seq2SeqAttentionDecoder):
  encoder       src (B, S) int64 -> enc_out (B, S, H), enc_keys (B, S, H) (the additive
                attention's W_k enc_out, computed once as attnlite does), hidden (L, B, H)
  decoder_step  token (B) int64, hidden (L, B, H), enc_out, enc_keys (B, S, H),
                valid_len (B) int64 -> logits (B, V), new_hidden (L, B, H)

The generator checks each wrapper against the d2l modules before exporting it.
"""
import argparse
import json
import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402


def load_model(path, positions_from_cache=False):
    """(net in eval mode, src tokens, tgt tokens, kind, config), via tools/export.py."""
    net, sv, tv, info = export.load_model(path, positions_from_cache=positions_from_cache)
    return net, list(sv.idx_to_token), list(tv.idx_to_token), info["attnlite.kind"], info["config"]


vocab = export.vocab_from_tokens


# ---- Transformer ---------------------------------------------------------------------------


def _heads(x, nh):  # (B, T, H) -> (B, NH, T, dh)
    B, T, H = x.shape
    return x.reshape(B, T, nh, H // nh).permute(0, 2, 1, 3)


def _merge(x):  # (B, NH, T, dh) -> (B, T, H)
    B, nh, T, dh = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, nh * dh)


def _attend(q, k, v, mask):
    """q (B, NH, Tq, dh), k/v (B, NH, Tk, dh); masked scores are -1e6 as in d2l's
    masked_softmax (written out: torch 1.13 cannot export its repeat_interleave)."""
    s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, -1e6)
    return torch.matmul(torch.softmax(s, dim=-1), v)


def _key_mask(valid_len, S):  # (B, 1, 1, S): key s is valid for batch row b
    return (torch.arange(S).unsqueeze(0) < valid_len.unsqueeze(1))[:, None, None, :]


class TransformerEncoderGraph(nn.Module):
    def __init__(self, net):
        super().__init__()
        e = net.encoder
        self.embedding, self.enc_blks = e.embedding, e.blks
        self.H = e.num_hiddens
        self.nh = e.blks[0].attention.num_heads
        self.register_buffer("P", e.pos_encoding.P[0].clone())  # (max_len, H)
        self.blks = net.decoder.blks

    def forward(self, src, valid_len):
        S = src.shape[1]
        X = self.embedding(src) * math.sqrt(self.H) + self.P[:S].unsqueeze(0)
        mask = _key_mask(valid_len, S)
        for blk in self.enc_blks:
            a = blk.attention
            o = _attend(_heads(a.W_q(X), self.nh), _heads(a.W_k(X), self.nh),
                        _heads(a.W_v(X), self.nh), mask)
            Y = blk.addnorm1(X, a.W_o(_merge(o)))
            X = blk.addnorm2(Y, blk.ffn(Y))
        ks = [b.attention2.W_k(X) for b in self.blks]
        vs = [b.attention2.W_v(X) for b in self.blks]
        return torch.stack(ks), torch.stack(vs)


class TransformerDecoderStep(nn.Module):
    def __init__(self, net):
        super().__init__()
        d = net.decoder
        self.embedding, self.blks, self.dense = d.embedding, d.blks, d.dense
        self.H = d.num_hiddens
        self.nh = d.blks[0].attention1.num_heads
        self.register_buffer("P", d.pos_encoding.P[0].clone())  # (max_len, H)

    def forward(self, token, pos, self_k, self_v, cross_k, cross_v, valid_len):
        X = self.embedding(token).unsqueeze(1) * math.sqrt(self.H)
        X = X + self.P.index_select(0, pos).unsqueeze(0)  # (B, 1, H)
        S = cross_k.shape[2]
        mask = _key_mask(valid_len, S)
        new_k, new_v = [], []
        for i, blk in enumerate(self.blks):
            a1 = blk.attention1
            k = torch.cat([self_k[i], a1.W_k(X)], 1)
            v = torch.cat([self_v[i], a1.W_v(X)], 1)
            new_k.append(k)
            new_v.append(v)
            o = _attend(_heads(a1.W_q(X), self.nh), _heads(k, self.nh), _heads(v, self.nh), None)
            Y = blk.addnorm1(X, a1.W_o(_merge(o)))
            a2 = blk.attention2
            o = _attend(_heads(a2.W_q(Y), self.nh), _heads(cross_k[i], self.nh),
                            _heads(cross_v[i], self.nh), mask)
            Z = blk.addnorm2(Y, a2.W_o(_merge(o)))
            X = blk.addnorm3(Z, blk.ffn(Z))
        return self.dense(X)[:, 0], torch.stack(new_k), torch.stack(new_v)


def check_transformer(net, enc_g, step_g, cfg, steps=6):
    """The wrappers reproduce the d2l modules (positions_from_cache decoding)."""
    torch.manual_seed(1)
    B, S, L, H = 2, cfg["num_steps"], cfg["num_layers"], cfg["num_hiddens"]
    src = torch.randint(4, cfg["src_vocab_size"], (B, S))
    vl = torch.tensor([S, max(1, S // 2)])
    with torch.no_grad():
        net.decoder.positions_from_cache = True
        enc_out = net.encoder(src, vl)
        state = net.decoder.init_state(enc_out, vl)
        ck, cv = enc_g(src, vl)
        ref_k = net.decoder.blks[0].attention2.W_k(enc_out)
        assert (ck[0] - ref_k).abs().max().item() < 1e-4, "encoder graph"
        sk = torch.zeros(L, B, 0, H)
        sv = torch.zeros(L, B, 0, H)
        tok = torch.full((B,), 2, dtype=torch.int64)
        for t in range(steps):
            ref, state = net.decoder(tok.unsqueeze(1), state)
            lg, sk, sv = step_g(tok, torch.tensor([t]), sk, sv, ck, cv, vl)
            err = (ref[:, 0] - lg).abs().max().item()
            assert err < 1e-3 * max(1.0, ref.abs().max().item()), f"step {t}: max diff {err}"
            tok = lg.argmax(-1)
        net.decoder.positions_from_cache = False


def export_transformer(net, cfg, out_dir, name):
    enc_g, step_g = TransformerEncoderGraph(net).eval(), TransformerDecoderStep(net).eval()
    check_transformer(net, enc_g, step_g, cfg)
    B, S, L, H = 1, cfg["num_steps"], cfg["num_layers"], cfg["num_hiddens"]
    src = torch.full((B, S), 4, dtype=torch.int64)
    vl = torch.tensor([S])
    with torch.no_grad():
        ck, cv = enc_g(src, vl)
    torch.onnx.export(enc_g, (src, vl), os.path.join(out_dir, name + ".encoder.onnx"),
                      opset_version=14, input_names=["src", "valid_len"],
                      output_names=["cross_k", "cross_v"],
                      dynamic_axes={"src": {0: "B"}, "valid_len": {0: "B"},
                                    "cross_k": {1: "B"}, "cross_v": {1: "B"}})
    sk = torch.zeros(L, B, 2, H)
    args = (torch.tensor([5]), torch.tensor([2]), sk, sk.clone(), ck, cv, vl)
    torch.onnx.export(step_g, args, os.path.join(out_dir, name + ".decoder_step.onnx"),
                      opset_version=14,
                      input_names=["token", "pos", "self_k", "self_v", "cross_k", "cross_v",
                                   "valid_len"],
                      output_names=["logits", "new_self_k", "new_self_v"],
                      dynamic_axes={"token": {0: "B"}, "self_k": {1: "B", 2: "t"},
                                    "self_v": {1: "B", 2: "t"}, "cross_k": {1: "B"},
                                    "cross_v": {1: "B"}, "valid_len": {0: "B"},
                                    "logits": {0: "B"}, "new_self_k": {1: "B", 2: "t1"},
                                    "new_self_v": {1: "B", 2: "t1"}})


# ---- Bahdanau ------------------------------------------------------------------------------


class BahdanauEncoderGraph(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.enc = net.encoder
        self.W_k = net.decoder.attention.W_k

    def forward(self, src):
        out, hidden = self.enc(src)
        enc_out = out.permute(1, 0, 2)
        return enc_out, self.W_k(enc_out), hidden  # keys projected once per source


class BahdanauDecoderStep(nn.Module):
    """Seq2SeqAttentionDecoder.forward for one token, with the keys W_k enc_out given."""

    def __init__(self, net):
        super().__init__()
        d = net.decoder
        self.att, self.embedding, self.rnn, self.dense = d.attention, d.embedding, d.rnn, d.dense

    def forward(self, token, hidden, enc_out, enc_keys, valid_len):
        S = enc_out.shape[1]
        q = self.att.W_q(hidden[-1]).unsqueeze(1)                       # (B, 1, H)
        scores = self.att.w_v(torch.tanh(q + enc_keys)).squeeze(-1)      # (B, S)
        mask = torch.arange(S).unsqueeze(0) < valid_len.unsqueeze(1)
        w = torch.softmax(scores.masked_fill(~mask, -1e6), dim=-1)
        context = torch.bmm(w.unsqueeze(1), enc_out)                     # (B, 1, H)
        x = torch.cat((context, self.embedding(token).unsqueeze(1)), dim=-1)
        out, hidden = self.rnn(x.permute(1, 0, 2), hidden)
        return self.dense(out[0]), hidden


def check_bahdanau(net, enc_g, step_g, cfg, steps=6):
    torch.manual_seed(1)
    B, S = 2, cfg["num_steps"]
    src = torch.randint(4, cfg["src_vocab_size"], (B, S))
    vl = torch.tensor([S, max(1, S // 2)])
    with torch.no_grad():
        state = net.decoder.init_state(net.encoder(src, vl), vl)
        eo, ek, h = enc_g(src)
        tok = torch.full((B,), 2, dtype=torch.int64)
        for t in range(steps):
            ref, state = net.decoder(tok.unsqueeze(1), state)
            lg, h = step_g(tok, h, eo, ek, vl)
            err = (ref[:, 0] - lg).abs().max().item()
            assert err < 1e-4 * max(1.0, ref.abs().max().item()), f"step {t}: max diff {err}"
            tok = lg.argmax(-1)


def export_bahdanau(net, cfg, out_dir, name):
    enc_g, step_g = BahdanauEncoderGraph(net).eval(), BahdanauDecoderStep(net).eval()
    check_bahdanau(net, enc_g, step_g, cfg)
    S = cfg["num_steps"]
    src = torch.full((1, S), 4, dtype=torch.int64)
    vl = torch.tensor([S])
    with torch.no_grad():
        eo, ek, h = enc_g(src)
    torch.onnx.export(enc_g, (src,), os.path.join(out_dir, name + ".encoder.onnx"),
                      opset_version=14, input_names=["src"],
                      output_names=["enc_out", "enc_keys", "hidden"],
                      dynamic_axes={"src": {0: "B"}, "enc_out": {0: "B"}, "enc_keys": {0: "B"},
                                    "hidden": {1: "B"}})
    torch.onnx.export(step_g, (torch.tensor([5]), h, eo, ek, vl),
                      os.path.join(out_dir, name + ".decoder_step.onnx"), opset_version=14,
                      input_names=["token", "hidden", "enc_out", "enc_keys", "valid_len"],
                      output_names=["logits", "new_hidden"],
                      dynamic_axes={"token": {0: "B"}, "hidden": {1: "B"}, "enc_out": {0: "B"},
                                    "enc_keys": {0: "B"}, "valid_len": {0: "B"},
                                    "logits": {0: "B"}, "new_hidden": {1: "B"}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--name", default=None)
    a = ap.parse_args()
    name = a.name or os.path.basename(a.model).replace(".safetensors", "")
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    net, src, tgt, kind, cfg = load_model(a.model)
    if kind == "transformer":
        export_transformer(net, cfg, a.out_dir, name)
    else:
        export_bahdanau(net, cfg, a.out_dir, name)
    info = {"kind": kind, "config": cfg, "src_vocab": src, "tgt_vocab": tgt,
            "encoder": name + ".encoder.onnx", "decoder_step": name + ".decoder_step.onnx"}
    with open(os.path.join(a.out_dir, name + ".json"), "w") as f:
        json.dump(info, f, ensure_ascii=False)
    print(f"{a.out_dir}/{name}.{{encoder,decoder_step}}.onnx: {kind}, checked against d2l")


if __name__ == "__main__":
    main()
