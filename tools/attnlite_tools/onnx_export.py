"""The ONNX export of attnlite models for the peer benchmarks: two graphs per model.

Two layouts of the same graphs (the Transformer's with a KV cache):

  peer layout (tools/export_onnx_peers.py, for bench/peer_ort.mjs, onnxruntime-node,
  bench/run.sh): any batch size, both model kinds, the state stacked over layers.

    /usr/bin/python3 tools/export_onnx_peers.py MODEL.safetensors OUT_DIR [--name NAME]

  writes OUT_DIR/NAME.encoder.onnx, OUT_DIR/NAME.decoder_step.onnx and OUT_DIR/NAME.json
  (config, vocabularies and the graphs' input/output names).  Opset 14, float32, dynamic
  batch (and, for the Transformer, a dynamic cache length).

  batch-1 layout (tools/export_onnx.py, for bench/wasm_bench.mjs, onnxruntime-web): the
  Transformer only, one input/output per layer; see export_batch1.

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

The wrappers are checked against the d2l modules before they are exported.
"""
import argparse
import json
import math
import os

import torch
from torch import nn

from . import d2l
from . import export
from .paths import ROOT


def load_model(path, positions_from_cache=False):
    """(net in eval mode, src tokens, tgt tokens, kind, config), via tools/export.py."""
    net, sv, tv, info = export.load_model(path, positions_from_cache=positions_from_cache)
    return net, list(sv.idx_to_token), list(tv.idx_to_token), info["attnlite.kind"], info["config"]



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


# ---- batch-1 layout (bench/wasm_bench.mjs) ------------------------------------------------


class Batch1Encoder(nn.Module):
    """TransformerEncoderGraph with one output per decoder layer: cross_k_0, cross_v_0, ..."""

    def __init__(self, net):
        super().__init__()
        self.graph = TransformerEncoderGraph(net)

    def forward(self, src, valid_len):
        ck, cv = self.graph(src, valid_len)
        return tuple(x[l] for l in range(ck.shape[0]) for x in (ck, cv))


class Batch1DecoderStep(nn.Module):
    """TransformerDecoderStep with token (1, 1), position (1,), valid_len (1,), then
    cross_k_<l>, cross_v_<l> (1, S, H) and past_k_<l>, past_v_<l> (1, t, H) for each layer
    l; returns logits (1, V), present_k_<l>, present_v_<l> (1, t + 1, H)."""

    def __init__(self, net):
        super().__init__()
        self.graph = TransformerDecoderStep(net)
        self.L = len(net.decoder.blks)

    def forward(self, token, position, valid_len, *state):
        cross, past = state[:2 * self.L], state[2 * self.L:]
        logits, k, v = self.graph(token[:, 0], position, torch.stack(past[0::2]),
                                  torch.stack(past[1::2]), torch.stack(cross[0::2]),
                                  torch.stack(cross[1::2]), valid_len)
        return (logits, *(x[l] for l in range(self.L) for x in (k, v)))


def export_batch1(net, cfg, out):
    """<out>-encoder.onnx   src (1, S) int64, valid_len (1,) int64 -> cross_k_<l>,
                            cross_v_<l> (1, S, H) for each decoder layer l
    <out>-decoder.onnx   token (1, 1) int64, position (1,) int64, valid_len (1,) int64,
                         cross_k_<l>, cross_v_<l>, past_k_<l>, past_v_<l> (1, t, H)
                         -> logits (1, V), present_k_<l>, present_v_<l> (1, t + 1, H)
    <out>.json           config and the names of the state inputs/outputs.
    The position input is t at step t (attnlite's default) or 0 at every step (the book's
    predict_seq2seq, attnlite --d2l-compat); the greedy loop stays in the caller."""
    check_transformer(net, TransformerEncoderGraph(net).eval(),
                      TransformerDecoderStep(net).eval(), cfg)
    L, H, S = cfg["num_layers"], cfg["num_hiddens"], cfg["num_steps"]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    src = torch.zeros((1, S), dtype=torch.long)
    vl = torch.tensor([S], dtype=torch.long)
    cross_names = [f"cross_{kv}_{l}" for l in range(L) for kv in "kv"]
    torch.onnx.export(Batch1Encoder(net).eval(), (src, vl), out + "-encoder.onnx",
                      opset_version=14, input_names=["src", "valid_len"],
                      output_names=cross_names)
    cross = [torch.zeros((1, S, H)) for _ in cross_names]
    past = [torch.zeros((1, 1, H)) for _ in range(2 * L)]
    past_names = [f"past_{kv}_{l}" for l in range(L) for kv in "kv"]
    present_names = [f"present_{kv}_{l}" for l in range(L) for kv in "kv"]
    dyn = {n: {1: "past"} for n in past_names}
    dyn.update({n: {1: "present"} for n in present_names})
    torch.onnx.export(Batch1DecoderStep(net).eval(),
                      (torch.zeros((1, 1), dtype=torch.long), torch.tensor([0]), vl, *cross,
                       *past),
                      out + "-decoder.onnx", opset_version=14,
                      input_names=["token", "position", "valid_len", *cross_names,
                                   *past_names],
                      output_names=["logits", *present_names], dynamic_axes=dyn)
    with open(out + ".json", "w") as f:
        json.dump({"config": cfg, "cross": cross_names, "past": past_names,
                   "present": present_names}, f, indent=1)


def greedy_batch1(enc, dec, src_ids, valid, cfg, bos, eos, d2l_compat=False):
    """The greedy loop over the batch-1 graphs (what bench/wasm_bench.mjs does with ORT)."""
    L, H, S = cfg["num_layers"], cfg["num_hiddens"], cfg["num_steps"]
    vl = torch.tensor([valid])
    cross = enc(torch.tensor([src_ids]), vl)
    past = [torch.zeros((1, 0, H)) for _ in range(2 * L)]
    tok, out = bos, []
    for t in range(S):
        logits, *past = dec(torch.tensor([[tok]]), torch.tensor([0 if d2l_compat else t]), vl,
                            *cross, *past)
        tok = int(logits.argmax(-1))
        if tok == eos:
            break
        out.append(tok)
    return out


def main_batch1():
    """tools/export_onnx.py"""
    ap = argparse.ArgumentParser(description="Export a shipped attnlite Transformer "
                                 "(models/*.safetensors) to ONNX for peer benchmarks.")
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "transformer-d2l.safetensors"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "onnx", "transformer-d2l"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    net, src_v, tgt_v, info = export.load_model(a.model)
    src_vocab, tgt_vocab = list(src_v.idx_to_token), list(tgt_v.idx_to_token)
    kind, cfg = info["attnlite.kind"], info["config"]
    if kind != "transformer":
        raise SystemExit(f"{a.model}: not a Transformer (attnlite.kind = {kind})")
    with torch.no_grad():
        export_batch1(net, cfg, a.out)
    print(f"wrote {a.out}-encoder.onnx, {a.out}-decoder.onnx, {a.out}.json")
    if a.check:
        s_idx = {t: i for i, t in enumerate(src_vocab)}
        S = cfg["num_steps"]
        if "bpe" in info:  # a sub-word model: cased English in byte-pair pieces (tools/bpe.py)
            from . import bpe
            table = info["bpe"]
            seg = bpe.Segmenter(bpe.symbols(table["alphabet"], [tuple(m) for m in table["merges"]]))
            sentences = ["Go.", "I lost.", "He's calm.", "I'm home."]
            pieces = lambda s: [s_idx.get(p, 0) for p in seg(s)]
            text = lambda ids: bpe.detokenize([tgt_vocab[i] for i in ids])
        else:  # the book's lowercased words
            sentences = d2l.BOOK_ENGS
            pieces = lambda s: [s_idx.get(w, 0) for w in s.split(" ")]
            text = lambda ids: " ".join(tgt_vocab[i] for i in ids)
        for sentence in sentences:
            ids = (pieces(sentence) + [s_idx["<eos>"]])[:S]  # as attnlite reads a source
            valid = len(ids)
            ids = (ids + [s_idx["<pad>"]] * S)[:S]
            with torch.no_grad():
                got = greedy_batch1(Batch1Encoder(net).eval(), Batch1DecoderStep(net).eval(),
                                    ids, valid, cfg, tgt_vocab.index("<bos>"),
                                    tgt_vocab.index("<eos>"))
            print(f"{sentence} => {text(got)}")


def main_peers():
    """tools/export_onnx_peers.py"""
    ap = argparse.ArgumentParser(description="Export an attnlite Transformer or Bahdanau "
                                 "model to two ONNX graphs for peer benchmarks.")
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
