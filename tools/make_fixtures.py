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
import sys
from collections import OrderedDict

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import d2l_ref as d2l  # noqa: E402
import safetensors_io as st  # noqa: E402

DTYPE_NAMES = {torch.float32: "F32", torch.int64: "I64", torch.int32: "I32",
               torch.int8: "I8"}

# name -> (description, OrderedDict of tensors, config) for the README
REGISTRY = OrderedDict()
# README.md: everything from this line on belongs to make_translation_fixtures.py
TRANSLATE_MARKER = "<!-- translation fixtures -->"


def i64(x):
    return torch.as_tensor(x, dtype=torch.int64)


def params(module, prefix=""):
    return OrderedDict((prefix + k, v.detach().clone().float())
                       for k, v in module.state_dict().items())


def write(out_dir, name, tensors, config, description):
    tensors = OrderedDict((k, v.detach().contiguous()) for k, v in tensors.items())
    for k, v in tensors.items():
        assert v.dtype in DTYPE_NAMES, (name, k, v.dtype)
    meta = {"config": json.dumps(config, sort_keys=False)}
    n = st.save(os.path.join(out_dir, name + ".safetensors"), tensors, meta)
    REGISTRY[name] = (description, tensors, config, n)
    print(f"{name}.safetensors: {len(tensors)} tensors, {n} bytes")


def assert_close(a, b, atol=1e-6, what=""):
    if not torch.allclose(a, b, atol=atol, rtol=0):
        raise AssertionError(f"{what}: max diff {(a - b).abs().max().item()}")


# --------------------------------------------------------------------------------------


def fx_masked_softmax(out):
    torch.manual_seed(1)
    X = torch.rand(2, 2, 4)
    vl1 = i64([2, 3])
    vl2 = i64([[1, 3], [2, 4]])
    Y1 = d2l.masked_softmax(X.clone(), vl1)
    Y2 = d2l.masked_softmax(X.clone(), vl2)
    Yn = d2l.masked_softmax(X.clone(), None)
    # masked positions are exactly 0 (exp(-1e6 - max) underflows)
    assert (Y1[0, :, 2:] == 0).all() and (Y1[1, :, 3:] == 0).all()
    assert (Y2[0, 0, 1:] == 0).all() and (Y2[1, 0, 2:] == 0).all()
    assert_close(Y1.sum(-1), torch.ones(2, 2), 1e-6, "rows sum to 1")
    write(out, "masked_softmax", OrderedDict([
        ("in.X", X), ("in.valid_lens_1d", vl1), ("out.Y_1d", Y1),
        ("in.valid_lens_2d", vl2), ("out.Y_2d", Y2), ("out.Y_none", Yn)]),
        {"mask_value": -1e6},
        "`masked_softmax` (book 10.3) with 1-D valid lengths (repeated per query), "
        "2-D valid lengths (one per row) and none (plain softmax).")


def fx_sequence_mask(out):
    X = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    vl = i64([1, 2])
    Y = d2l.sequence_mask(X.clone(), vl)
    assert torch.equal(Y, torch.tensor([[1., 0., 0.], [4., 5., 0.]]))
    X3 = torch.ones(2, 3, 4)
    Y3 = d2l.sequence_mask(X3.clone(), vl, value=-1)
    write(out, "sequence_mask", OrderedDict([
        ("in.X", X), ("in.valid_len", vl), ("out.Y", Y),
        ("in.X3", X3), ("out.Y3", Y3)]),
        {"value": 0, "value3": -1},
        "`sequence_mask` (book 9.7): the book's 2-D example with value 0, and a 3-D "
        "input (masking whole rows of the last axis) with value -1.")


def fx_additive(out):
    torch.manual_seed(2)
    cfg = dict(key_size=2, query_size=20, num_hiddens=8, dropout=0.1)
    queries = torch.normal(0, 1, (2, 1, 20))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = i64([2, 6])
    att = d2l.AdditiveAttention(**cfg)
    att.eval()
    with torch.no_grad():
        o = att(queries, keys, values, valid_lens)
        w = att.attention_weights.clone()
        # the book's printed result
        assert_close(o, torch.tensor([[[2., 3., 4., 5.]], [[10., 11., 12., 13.]]]), 1e-5,
                     "book additive output")
        assert_close(w[0, 0, :2], torch.full((2,), 0.5), 1e-6, "uniform 1/2")
        assert_close(w[1, 0, :6], torch.full((6,), 1 / 6), 1e-6, "uniform 1/6")
        assert (w[0, 0, 2:] == 0).all() and (w[1, 0, 6:] == 0).all()
        keys_rand = torch.normal(0, 1, (2, 10, 2))
        o2 = att(queries, keys_rand, values, valid_lens)
        w2 = att.attention_weights.clone()
    t = params(att)
    t.update([("in.queries", queries), ("in.keys", keys), ("in.values", values),
              ("in.valid_lens", valid_lens), ("out.output", o),
              ("out.attention_weights", w), ("in.keys_rand", keys_rand),
              ("out.output_rand", o2), ("out.attention_weights_rand", w2)])
    write(out, "additive_attention", t, cfg,
          "`AdditiveAttention(2, 20, 8, 0.1)` in eval mode: the book's example (all keys "
          "equal, so weights are uniform over the valid length; output [[2,3,4,5]], "
          "[[10,11,12,13]]) and a second case with random keys and the same parameters.")


def fx_dot(out):
    torch.manual_seed(3)
    cfg = dict(dropout=0.5)
    queries = torch.normal(0, 1, (2, 1, 2))
    keys = torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = i64([2, 6])
    att = d2l.DotProductAttention(**cfg)
    att.eval()
    o = att(queries, keys, values, valid_lens)
    w = att.attention_weights.clone()
    assert_close(o, torch.tensor([[[2., 3., 4., 5.]], [[10., 11., 12., 13.]]]), 1e-5,
                 "book dot output")
    q2 = torch.normal(0, 1, (2, 3, 8))
    k2 = torch.normal(0, 1, (2, 5, 8))
    v2 = torch.normal(0, 1, (2, 5, 6))
    vl2 = i64([[1, 2, 5], [3, 3, 4]])
    o2 = att(q2, k2, v2, vl2)
    w2 = att.attention_weights.clone()
    write(out, "dot_product_attention", OrderedDict([
        ("in.queries", queries), ("in.keys", keys), ("in.values", values),
        ("in.valid_lens", valid_lens), ("out.output", o), ("out.attention_weights", w),
        ("in.queries2", q2), ("in.keys2", k2), ("in.values2", v2),
        ("in.valid_lens2", vl2), ("out.output2", o2), ("out.attention_weights2", w2)]),
        cfg,
        "`DotProductAttention(0.5)` in eval mode: the book's example (1-D valid lengths) and "
        "a random case with 2-D valid lengths (one per query).")


def fx_mha(out):
    torch.manual_seed(4)
    cfg = dict(key_size=100, query_size=100, value_size=100, num_hiddens=100,
               num_heads=5, dropout=0.5, bias=False)
    att = d2l.MultiHeadAttention(**cfg)
    att.eval()
    X = torch.normal(0, 1, (2, 4, 100))
    Y = torch.normal(0, 1, (2, 6, 100))
    vl = i64([3, 2])
    with torch.no_grad():
        o = att(X, Y, Y, vl)
        w = att.attention.attention_weights.clone()
    assert o.shape == (2, 4, 100) and w.shape == (10, 4, 6)
    t = params(att)
    t.update([("in.X", X), ("in.Y", Y), ("in.valid_lens", vl), ("out.output", o),
              ("out.attention_weights", w)])
    write(out, "multi_head_attention", t, cfg,
          "`MultiHeadAttention(100, 100, 100, 100, 5, 0.5)` (no bias) in eval mode: "
          "queries X, keys = values = Y; attention weights are (batch*heads, Tq, Tk), "
          "row b*heads+h.")

    torch.manual_seed(5)
    cfg = dict(key_size=24, query_size=20, value_size=16, num_hiddens=40,
               num_heads=4, dropout=0.0, bias=True)
    att = d2l.MultiHeadAttention(**cfg)
    att.eval()
    Q = torch.normal(0, 1, (2, 3, 20))
    K = torch.normal(0, 1, (2, 5, 24))
    V = torch.normal(0, 1, (2, 5, 16))
    vl = i64([5, 2])
    with torch.no_grad():
        o = att(Q, K, V, vl)
        w = att.attention.attention_weights.clone()
    t = params(att)
    t.update([("in.Q", Q), ("in.K", K), ("in.V", V), ("in.valid_lens", vl),
              ("out.output", o), ("out.attention_weights", w)])
    write(out, "multi_head_attention_bias", t, cfg,
          "`MultiHeadAttention(24, 20, 16, 40, 4, 0, bias=True)`: distinct key/query/value "
          "sizes and biases on all four projections.")


def fx_positional(out):
    torch.manual_seed(6)
    pe = d2l.PositionalEncoding(32, 0)
    pe.eval()
    pe24 = d2l.PositionalEncoding(24, 0)
    X = torch.normal(0, 1, (2, 60, 32))
    Y = pe(X)
    write(out, "positional_encoding", OrderedDict([
        ("out.P", pe.P), ("out.P24", pe24.P), ("in.X", X), ("out.Y", Y)]),
        {"num_hiddens": 32, "num_hiddens_P24": 24, "max_len": 1000, "dropout": 0},
        "Sinusoidal `PositionalEncoding` computed exactly as the book (float32 "
        "`arange(max_len) / pow(10000, arange(0, H, 2) / H)`, sin on even columns, cos on "
        "odd): the full table for H=32 and H=24, and X + P[:, :60] for H=32.")

    torch.manual_seed(7)
    cfg = dict(num_hiddens=16, dropout=0, max_len=100)
    emb = d2l.LearnablePositionalEmbedding(**cfg)
    emb.eval()
    X = torch.normal(0, 1, (2, 7, 16))
    with torch.no_grad():
        Y = emb(X)
    t = params(emb)
    t.update([("in.X", X), ("out.Y", Y)])
    write(out, "positional_embedding", t, cfg,
          "Learnable absolute position embedding: Y = X + pos_embedding[:, :T].")


def fx_ffn(out):
    torch.manual_seed(8)
    cfg = dict(ffn_num_input=4, ffn_num_hiddens=4, ffn_num_outputs=8)
    ffn = d2l.PositionWiseFFN(**cfg)
    ffn.eval()
    X = torch.normal(0, 1, (2, 3, 4))
    with torch.no_grad():
        Y = ffn(X)
    t = params(ffn)
    t.update([("in.X", X), ("out.Y", Y)])
    write(out, "ffn", t, cfg, "`PositionWiseFFN(4, 4, 8)`: dense2(relu(dense1(X))).")


def fx_addnorm(out):
    for name, shape, xs, seed in (("addnorm", [3, 4], (2, 3, 4), 9),
                                  ("addnorm24", [24], (2, 5, 24), 10)):
        torch.manual_seed(seed)
        cfg = dict(normalized_shape=shape, dropout=0.5)
        an = d2l.AddNorm(**cfg)
        an.eval()
        with torch.no_grad():
            an.ln.weight.copy_(torch.normal(1, 0.5, tuple(shape)))
            an.ln.bias.copy_(torch.normal(0, 0.5, tuple(shape)))
        X = torch.normal(0, 1, xs)
        Y = torch.normal(0, 1, xs)
        with torch.no_grad():
            Z = an(X, Y)
        t = params(an)
        t.update([("in.X", X), ("in.Y", Y), ("out.Z", Z)])
        write(out, name, t, cfg,
              f"`AddNorm({shape}, 0.5)` in eval mode: LayerNorm(Y + X) over the last "
              f"{len(shape)} axes (eps 1e-5), with random (non-trivial) ln.weight/ln.bias.")


ENC_ARGS = dict(key_size=24, query_size=24, value_size=24, num_hiddens=24,
                norm_shape=[24], ffn_num_input=24, ffn_num_hiddens=48, num_heads=8,
                dropout=0.5)


def fx_encoder_block(out):
    torch.manual_seed(11)
    blk = d2l.EncoderBlock(**ENC_ARGS)
    blk.eval()
    X = torch.normal(0, 1, (2, 100, 24))
    vl = i64([3, 2])
    with torch.no_grad():
        Y = blk(X, vl)
    w = blk.attention.attention.attention_weights.clone()
    t = params(blk)
    t.update([("in.X", X), ("in.valid_lens", vl), ("out.Y", Y),
              ("out.attention_weights", w)])
    write(out, "encoder_block", t, ENC_ARGS,
          "`EncoderBlock(24, 24, 24, 24, [24], 24, 48, 8, 0.5)` in eval mode (the book's "
          "configuration) on random input.")


def fx_transformer_encoder(out):
    torch.manual_seed(12)
    cfg = dict(vocab_size=200, **ENC_ARGS, num_layers=2)
    # constructor order: vocab, k, q, v, H, norm_shape, ffn_in, ffn_h, heads, layers, dropout
    enc = d2l.TransformerEncoder(200, 24, 24, 24, 24, [24], 24, 48, 8, 2, 0.5)
    enc.eval()
    X = torch.randint(0, 200, (2, 100), dtype=torch.int64)
    vl = i64([3, 2])
    with torch.no_grad():
        Y = enc(X, vl)
    t = params(enc)
    t.update([("in.X", X), ("in.valid_lens", vl), ("out.Y", Y)])
    for i, w in enumerate(enc.attention_weights):
        t[f"out.attention_weights.{i}"] = w.clone()
    write(out, "transformer_encoder", t, cfg,
          "`TransformerEncoder(200, 24, 24, 24, 24, [24], 24, 48, 8, 2, 0.5)` in eval mode: "
          "embedding * sqrt(24) + P, then two encoder blocks.")


def fx_decoder_block(out):
    torch.manual_seed(13)
    enc_blk = d2l.EncoderBlock(**ENC_ARGS)
    dec_blk = d2l.DecoderBlock(**ENC_ARGS, i=0)
    enc_blk.eval()
    dec_blk.eval()
    X = torch.normal(0, 1, (2, 100, 24))
    vl = i64([3, 2])
    with torch.no_grad():
        enc_out = enc_blk(X, vl)
        state = [enc_out, vl, [None]]
        Y, state = dec_blk(X, state)
    ws = dec_blk.attention1.attention.attention_weights.clone()
    wc = dec_blk.attention2.attention.attention_weights.clone()
    t = params(enc_blk, "enc.")
    t.update(params(dec_blk))
    t.update([("in.X", X), ("in.valid_lens", vl), ("out.enc_outputs", enc_out),
              ("out.Y", Y), ("out.self_attention_weights", ws),
              ("out.cross_attention_weights", wc)])
    write(out, "decoder_block", t, dict(ENC_ARGS, i=0),
          "`DecoderBlock(24, 24, 24, 24, [24], 24, 48, 8, 0.5, 0)` in eval mode, the book's "
          "example: state = [encoder_blk(X, valid_lens), valid_lens, [None]]. Eval mode "
          "means no causal mask (dec_valid_lens = None), as in the book.")


def _transformer_steps(net, src, src_vl, steps, positions_from_cache, bos=2):
    """Greedy step-by-step decoding of a batch (no early stop)."""
    net.eval()
    net.decoder.positions_from_cache = positions_from_cache
    B = src.shape[0]
    L = net.decoder.num_layers
    enc_out = net.encoder(src, src_vl)
    state = net.decoder.init_state(enc_out, src_vl)
    dec_X = torch.full((B, 1), bos, dtype=torch.int64)
    toks, logits = [], []
    heads = net.decoder.blks[0].attention1.num_heads
    Tk = src.shape[1]
    dec_self = [torch.zeros(steps, B * heads, steps) for _ in range(L)]
    cross = [torch.zeros(steps, B * heads, Tk) for _ in range(L)]
    margins = []
    for t in range(steps):
        Y, state = net.decoder(dec_X, state)
        top2 = Y[:, 0].topk(2, dim=-1).values
        margins.append((top2[:, 0] - top2[:, 1]).min().item())
        dec_X = Y.argmax(dim=2)
        toks.append(dec_X[:, 0])
        logits.append(Y[:, 0])
        for l in range(L):
            dec_self[l][t, :, :t + 1] = net.decoder.attention_weights[0][l][:, 0, :]
            cross[l][t] = net.decoder.attention_weights[1][l][:, 0, :]
    net.decoder.positions_from_cache = False
    return (torch.stack(toks, 1), torch.stack(logits, 0), dec_self, cross, min(margins))


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
             "`tools/d2l_ref.py` (a faithful re-implementation of the d2l.ai v0.17 PyTorch "
             "code for chapter 10):", "",
             "    /usr/bin/python3 tools/make_fixtures.py", "",
             "Each file is a safetensors file (see `tools/safetensors_io.py`). Conventions:",
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
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    os.makedirs(args.out, exist_ok=True)
    for fx in (fx_masked_softmax, fx_sequence_mask, fx_additive, fx_dot, fx_mha,
               fx_positional, fx_ffn, fx_addnorm, fx_encoder_block, fx_transformer_encoder,
               fx_decoder_block, fx_transformer, fx_rnn, fx_seq2seq_encoder, fx_bahdanau,
               fx_nadaraya_watson):
        fx(args.out)
    write_readme(args.out)


if __name__ == "__main__":
    main()
