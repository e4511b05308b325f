"""The layer fixtures of tools/make_fixtures.py (attention, positional encodings, blocks),
and the helpers every fixture file is written with.

Every fixture is deterministic (torch.manual_seed per file, float32, one thread).
Conventions inside each file: module parameters under their state_dict() names,
inputs as `in.<name>`, outputs as `out.<name>`, token ids and valid lengths as I64,
and `__metadata__` {"config": "<json of the constructor arguments>"}.
"""
import json
import os
from collections import OrderedDict

import torch

from . import d2l
from . import safetensors as st

DTYPE_NAMES = {torch.float32: "F32", torch.int64: "I64", torch.int32: "I32",
               torch.int8: "I8"}

# name -> (description, OrderedDict of tensors, config) for the README
REGISTRY = OrderedDict()


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


LAYER_FIXTURES = (fx_masked_softmax, fx_sequence_mask, fx_additive, fx_dot, fx_mha,
                  fx_positional, fx_ffn, fx_addnorm, fx_encoder_block, fx_transformer_encoder,
                  fx_decoder_block)


def write_readme_section(readme, marker, section):
    """Replaces the generated section that starts with `marker` (section includes it) in
    tests/fixtures/README.md, or appends it; later generated sections (their own
    <!-- ... --> markers) are kept after it."""
    with open(readme) as f:
        text = f.read()
    tail = ""
    if marker in text:
        head, _, rest = text.partition(marker)
        nxt = rest.find("<!-- ")
        tail = "\n" + rest[nxt:] if nxt >= 0 else ""
        text = head
    with open(readme, "w") as f:
        f.write(text.rstrip("\n") + "\n\n" + section + tail)
