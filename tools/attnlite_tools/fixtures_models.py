"""Generate the PyTorch reference fixtures under tests/fixtures/.

    /usr/bin/python3 tools/make_fixtures.py [--out tests/fixtures]

Every fixture is deterministic (torch.manual_seed per file, float32, one thread).
Conventions inside each file: module parameters under their state_dict() names,
inputs as `in.<name>`, outputs as `out.<name>`, token ids and valid lengths as I64,
and `__metadata__` {"config": "<json of the constructor arguments>"}.
The list of files and tensors is written to tests/fixtures/README.md.
"""
import argparse
import json
import os
from collections import OrderedDict

import torch
from torch import nn

from . import d2l
from .fixtures_layers import (DTYPE_NAMES, LAYER_FIXTURES, REGISTRY, assert_close, i64,
                              params, write)
from .paths import FIXTURES_DIR
from .search import greedy_decode

# README.md: everything from this line on belongs to make_translation_fixtures.py
TRANSLATE_MARKER = "<!-- translation fixtures -->"


def _transformer_steps(net, src, src_vl, steps, positions_from_cache, bos=2):
    """Greedy step-by-step decoding of a batch (no early stop), with each step's logits,
    attention weights and smallest top-2 logit margin."""
    net.eval()
    net.decoder.positions_from_cache = positions_from_cache
    B = src.shape[0]
    L = net.decoder.num_layers
    logits = []
    heads = net.decoder.blks[0].attention1.num_heads
    Tk = src.shape[1]
    dec_self = [torch.zeros(steps, B * heads, steps) for _ in range(L)]
    cross = [torch.zeros(steps, B * heads, Tk) for _ in range(L)]
    margins = []

    def record(t, Y):
        top2 = Y[:, 0].topk(2, dim=-1).values
        margins.append((top2[:, 0] - top2[:, 1]).min().item())
        logits.append(Y[:, 0])
        for l in range(L):
            dec_self[l][t, :, :t + 1] = net.decoder.attention_weights[0][l][:, 0, :]
            cross[l][t] = net.decoder.attention_weights[1][l][:, 0, :]

    toks = greedy_decode(net, src, src_vl, bos, steps, on_step=record)
    net.decoder.positions_from_cache = False
    return (toks, torch.stack(logits, 0), dec_self, cross, min(margins))


def fx_transformer(out):
    torch.manual_seed(14)
    cfg = dict(src_vocab_size=50, tgt_vocab_size=60, num_hiddens=32, num_layers=2,
               num_heads=4, ffn_num_hiddens=64, dropout=0.0, key_size=32, query_size=32,
               value_size=32, norm_shape=[32], ffn_num_input=32, bos=2)
    net = d2l.make_transformer(50, 60, num_hiddens=32, num_layers=2, num_heads=4,
                               ffn_num_hiddens=64, dropout=0.0)
    src = torch.randint(4, 50, (2, 10), dtype=torch.int64)
    src_vl = i64([7, 4])
    dec_in = torch.cat([torch.full((2, 1), 2, dtype=torch.int64),
                        torch.randint(4, 60, (2, 9), dtype=torch.int64)], 1)
    t = params(net)
    t.update([("in.src", src), ("in.src_valid_lens", src_vl), ("in.dec_in", dec_in)])
    with torch.no_grad():
        # teacher forcing: train mode (dropout 0) so that the causal mask applies
        net.train()
        logits, _ = net(src, dec_in, src_vl)
        t["out.tf_logits"] = logits
        for l in range(2):
            t[f"out.tf_enc_attn.{l}"] = net.encoder.attention_weights[l].clone()
        for l in range(2):
            t[f"out.tf_dec_self.{l}"] = net.decoder.attention_weights[0][l].clone()
        for l in range(2):
            t[f"out.tf_cross.{l}"] = net.decoder.attention_weights[1][l].clone()
        for v, pfc in (("pos", True), ("d2l", False)):
            toks, lg, ds, cr, margin = _transformer_steps(net, src, src_vl, 10, pfc)
            assert margin > 1e-3, f"near tie in argmax ({margin})"
            print(f"  transformer {v}: min top-2 logit margin {margin:.4f}")
            t[f"out.{v}.tokens"] = toks
            t[f"out.{v}.logits"] = lg
            for l in range(2):
                t[f"out.{v}.dec_self.{l}"] = ds[l]
            for l in range(2):
                t[f"out.{v}.cross.{l}"] = cr[l]
        # Cross-check of the cache logic: step-by-step decoding with positions from the
        # cache must reproduce teacher forcing (causal mask) on the same inputs.
        toks = t["out.pos.tokens"]
        dec_in2 = torch.cat([torch.full((2, 1), 2, dtype=torch.int64), toks[:, :-1]], 1)
        net.train()
        logits2, _ = net(src, dec_in2, src_vl)
        assert_close(logits2.permute(1, 0, 2), t["out.pos.logits"], 1e-5,
                     "step-by-step (positions_from_cache) vs teacher forcing")
        for l in range(2):
            tf_self = net.decoder.attention_weights[0][l]  # (8, 10, 10), causal
            assert_close(tf_self.permute(1, 0, 2), t[f"out.pos.dec_self.{l}"], 1e-5,
                         "self-attention weights")
        # the book's mode differs once t > 0
        assert not torch.allclose(t["out.d2l.logits"][1:], t["out.pos.logits"][1:])
        net.eval()
    write(out, "transformer", t, cfg,
          "Full `EncoderDecoder(TransformerEncoder, TransformerDecoder)`, src vocab 50, tgt "
          "vocab 60, H=32, 2 layers, 4 heads, FFN 64, dropout 0, default PyTorch init. "
          "`tf_*`: one teacher-forced call in train mode (dropout 0, so the causal "
          "dec_valid_lens applies). `pos.*` / `d2l.*`: greedy decoding in eval mode, batch "
          "2, from bos=2, exactly 10 steps without early stop; `pos` adds P[:, t] at step t "
          "(positions from the cache), `d2l` adds P[:, 0] at every step (the book). "
          "`<v>.logits[t]` is step t's (2, 60) output, `<v>.tokens[:, t]` its argmax. "
          "`<v>.dec_self.<l>[t, :, :t+1]` holds step t's (8, 1, t+1) self-attention weights "
          "(zero elsewhere); `<v>.cross.<l>[t]` step t's (8, 1, 10) cross weights. The "
          "generator asserts that `pos` step-by-step logits equal teacher forcing on "
          "[bos, tokens[:, :-1]] (1e-5).")


def fx_rnn(out):
    torch.manual_seed(15)
    cfg = dict(input_size=8, hidden_size=16, num_layers=2)
    gru = nn.GRU(**cfg)
    X = torch.normal(0, 1, (5, 3, 8))
    h0 = torch.normal(0, 1, (2, 3, 16))
    with torch.no_grad():
        Y, hn = gru(X, h0)
    t = params(gru)
    t.update([("in.X", X), ("in.h0", h0), ("out.Y", Y), ("out.hn", hn)])
    write(out, "gru", t, cfg,
          "`nn.GRU(8, 16, 2)` (PyTorch gate order r, z, n; time-major input).")

    torch.manual_seed(16)
    lstm = nn.LSTM(**cfg)
    X = torch.normal(0, 1, (5, 3, 8))
    h0 = torch.normal(0, 1, (2, 3, 16))
    c0 = torch.normal(0, 1, (2, 3, 16))
    with torch.no_grad():
        Y, (hn, cn) = lstm(X, (h0, c0))
    t = params(lstm)
    t.update([("in.X", X), ("in.h0", h0), ("in.c0", c0), ("out.Y", Y), ("out.hn", hn),
              ("out.cn", cn)])
    write(out, "lstm", t, cfg,
          "`nn.LSTM(8, 16, 2)` (PyTorch gate order i, f, g, o; time-major input).")


def fx_seq2seq_encoder(out):
    torch.manual_seed(17)
    cfg = dict(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    enc = d2l.Seq2SeqEncoder(**cfg)
    enc.eval()
    X = torch.zeros((4, 7), dtype=torch.int64)
    Xr = torch.randint(0, 10, (4, 7), dtype=torch.int64)
    with torch.no_grad():
        o, s = enc(X)
        o2, s2 = enc(Xr)
    t = params(enc)
    t.update([("in.X", X), ("out.output", o), ("out.state", s), ("in.X_rand", Xr),
              ("out.output_rand", o2), ("out.state_rand", s2)])
    write(out, "seq2seq_encoder", t, cfg,
          "`Seq2SeqEncoder(10, 8, 16, 2)` (GRU) in eval mode: the book's zeros input and a "
          "random one; output is time-major (T, B, H).")

    torch.manual_seed(18)
    enc = d2l.Seq2SeqLSTMEncoder(**cfg)
    enc.eval()
    X = torch.zeros((4, 7), dtype=torch.int64)
    Xr = torch.randint(0, 10, (4, 7), dtype=torch.int64)
    with torch.no_grad():
        o, (h, c) = enc(X)
        o2, (h2, c2) = enc(Xr)
    t = params(enc)
    t.update([("in.X", X), ("out.output", o), ("out.h", h), ("out.c", c),
              ("in.X_rand", Xr), ("out.output_rand", o2), ("out.h_rand", h2),
              ("out.c_rand", c2)])
    write(out, "seq2seq_lstm_encoder", t, cfg,
          "`Seq2SeqLSTMEncoder(10, 8, 16, 2)`: the encoder with an LSTM; state is (h, c).")


def fx_bahdanau(out):
    torch.manual_seed(19)
    cfg = dict(vocab_size=10, embed_size=8, num_hiddens=16, num_layers=2)
    net = d2l.EncoderDecoder(d2l.Seq2SeqEncoder(**cfg), d2l.Seq2SeqAttentionDecoder(**cfg))
    net.eval()
    X = torch.zeros((4, 7), dtype=torch.int64)
    Xr = torch.randint(0, 10, (4, 7), dtype=torch.int64)
    Dr = torch.randint(0, 10, (4, 5), dtype=torch.int64)
    vl = i64([7, 3, 5, 1])
    with torch.no_grad():
        o, state = net(X, X, None)
        w = torch.stack([a.squeeze(1) for a in net.decoder.attention_weights], 0)
        o2, state2 = net(Xr, Dr, vl)
        w2 = torch.stack([a.squeeze(1) for a in net.decoder.attention_weights], 0)
    assert o.shape == (4, 7, 10) and state[1].shape == (2, 4, 16) and w.shape == (7, 4, 7)
    assert (w2[:, 3, 1:] == 0).all()
    t = params(net)
    t.update([("in.X", X), ("out.output", o), ("out.state", state[1]),
              ("out.attention_weights", w), ("in.X_rand", Xr), ("in.dec_rand", Dr),
              ("in.valid_lens", vl), ("out.output_rand", o2), ("out.state_rand", state2[1]),
              ("out.attention_weights_rand", w2)])
    write(out, "bahdanau", t, dict(encoder=cfg, decoder=cfg),
          "`EncoderDecoder(Seq2SeqEncoder(10, 8, 16, 2), Seq2SeqAttentionDecoder(10, 8, 16, "
          "2))` in eval mode. Book case: net(X, X) with X zeros and enc_valid_lens None. "
          "Random case: net(X_rand, dec_rand, valid_lens). `state` is the decoder's final "
          "hidden state; `attention_weights[t]` is step t's (B, 1, T_src) weights squeezed.")


def fx_nadaraya_watson(out):
    torch.manual_seed(20)
    x_train, y_train, x_test, y_truth = d2l.nw_data(50)
    y_hat, w = d2l.nw_nonparametric(x_train, y_train, x_test)
    net = d2l.NWKernelRegression()
    w_init = net.w.detach().clone()
    losses = d2l.nw_train(net, x_train, y_train, num_epochs=5, lr=0.5)
    n_test = len(x_test)
    keys = x_train.repeat((n_test, 1))
    values = y_train.repeat((n_test, 1))
    with torch.no_grad():
        y_hat_p = net(x_test, keys, values)
    wp = net.attention_weights.detach().clone()
    write(out, "nadaraya_watson", OrderedDict([
        ("in.x_train", x_train), ("in.y_train", y_train), ("in.x_test", x_test),
        ("out.y_truth", y_truth), ("out.attention_weights", w), ("out.y_hat", y_hat),
        ("in.w_init", w_init), ("out.w", net.w.detach().clone()),
        ("out.attention_weights_param", wp), ("out.y_hat_param", y_hat_p),
        ("out.train_loss", torch.tensor(losses, dtype=torch.float32))]),
        {"n_train": 50, "epochs": 5, "lr": 0.5, "kernel": "-(x-xi)^2/2"},
        "Nadaraya-Watson kernel regression (book 10.2): f(x) = 2 sin(x) + x^0.8, 50 sorted "
        "training points with noise N(0, 0.5), test points arange(0, 5, 0.1). "
        "Nonparametric: softmax(-(x - x_i)^2 / 2) @ y_train. Parametric: "
        "`NWKernelRegression` (initial w = in.w_init) trained 5 epochs with SGD lr 0.5 on "
        "leave-one-out keys/values; `train_loss[e]` is that epoch's l.sum() (before the "
        "step), then evaluated on x_test with all training points as keys.")


def write_readme(out):
    lines = ["# Test fixtures (PyTorch reference outputs)", "",
             "Generated by `tools/make_fixtures.py` from the reference modules in "
             "`tools/attnlite_tools/d2l/` (a faithful re-implementation of the d2l.ai v0.17 PyTorch "
             "code for chapter 10):", "",
             "    /usr/bin/python3 tools/make_fixtures.py", "",
             "Each file is a safetensors file (see `tools/attnlite_tools/safetensors.py`). "
             "Conventions:",
             "", "- module parameters under their `state_dict()` names;",
             "- inputs as `in.<name>`, outputs as `out.<name>`;",
             "- all floats are F32, token ids and valid lengths are I64;",
             "- `__metadata__` holds `config`, the JSON of the constructor arguments;",
             "- every file is reproducible: `torch.manual_seed` per file, one thread, "
             "eval mode unless stated.", "",
             "Translation fixtures for the shipped models (`translate_*.safetensors`) are "
             "described at the end and produced by `tools/make_translation_fixtures.py`.",
             ""]
    for name, (desc, tensors, cfg, nbytes) in REGISTRY.items():
        lines += [f"## `{name}.safetensors` ({nbytes} bytes)", "", desc, "",
                  f"config: `{json.dumps(cfg)}`", "",
                  "| tensor | dtype | shape |", "|---|---|---|"]
        for k, v in tensors.items():
            lines.append(f"| `{k}` | {DTYPE_NAMES[v.dtype]} | {list(v.shape)} |")
        lines.append("")
    # keep the section written by make_translation_fixtures.py, if any
    path = os.path.join(out, "README.md")
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        if TRANSLATE_MARKER in old:
            lines.append(old[old.index(TRANSLATE_MARKER):].rstrip("\n"))
            lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=FIXTURES_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    os.makedirs(args.out, exist_ok=True)
    for fx in LAYER_FIXTURES + (fx_transformer, fx_rnn, fx_seq2seq_encoder, fx_bahdanau,
                                fx_nadaraya_watson):
        fx(args.out)
    write_readme(args.out)
