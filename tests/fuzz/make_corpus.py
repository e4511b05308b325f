#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets under tests/fuzz/corpus/<target>/.

Standard library only. The loader seeds are tiny but complete models (a Transformer, a GRU
and an LSTM Bahdanau model with a handful of weights each), one file per dtype, and damaged
copies (truncated, header length beyond the file, bad JSON); the mutator starts from files
that reach every check of SafeTensors::parse and Model::from_bytes.

Usage: python3 tests/fuzz/make_corpus.py   (rewrites the corpus; the output is deterministic)
"""
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(0)

DTYPES = {"F32": ("<f", 4), "F16": ("<e", 2), "I64": ("<q", 8), "I32": ("<i", 4),
          "I8": ("<b", 1), "U8": ("<B", 1)}


def st_bytes(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values) -> safetensors image."""
    header, data, off = {}, b"", 0
    for name, dtype, shape, values in tensors:
        fmt, size = DTYPES[dtype]
        raw = b"".join(struct.pack(fmt, v) for v in values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


def f32(name, *shape):
    n = 1
    for d in shape:
        n *= d
    return (name, "F32", list(shape), [round(rng.uniform(-0.5, 0.5), 3) for _ in range(n)])


SRC = ["<unk>", "<pad>", "<bos>", "<eos>", ".", "go", "i'm", "home"]
TGT = ["<unk>", "<pad>", "<bos>", "<eos>", ".", "va", "je", "suis"]


def model_meta(kind, config):
    return {"attnlite.format": "1", "attnlite.kind": kind, "attnlite.config": json.dumps(config),
            "attnlite.src_vocab": json.dumps(SRC), "attnlite.tgt_vocab": json.dumps(TGT)}


def encoder_blocks(H, F, L):
    """The d2l Transformer encoder's blocks (d2l 10.7 names), in file order."""
    t = []
    for l in range(L):
        p = "encoder.blks.block%d." % l
        t += _mha(p + "attention.", H) + _norm(p + "addnorm1.", H) + _ffn(p + "ffn.", H, F)
        t += _norm(p + "addnorm2.", H)
    return t


def decoder_blocks(H, F, L):
    t = []
    for l in range(L):
        p = "decoder.blks.block%d." % l
        t += (_mha(p + "attention1.", H) + _norm(p + "addnorm1.", H) + _mha(p + "attention2.", H) +
              _norm(p + "addnorm2.", H) + _ffn(p + "ffn.", H, F) + _norm(p + "addnorm3.", H))
    return t


def _mha(p, H):
    return [f32(p + w + ".weight", H, H) for w in ("W_q", "W_k", "W_v", "W_o")]


def _norm(p, H):
    return [f32(p + "ln.weight", H), f32(p + "ln.bias", H)]


def _ffn(p, H, F):
    return [f32(p + "dense1.weight", F, H), f32(p + "dense1.bias", F),
            f32(p + "dense2.weight", H, F), f32(p + "dense2.bias", H)]


def tiny_transformer(H=4, F=4, L=1, NH=2, steps=4, quantized=False):
    t = [f32("encoder.embedding.weight", len(SRC), H)] + encoder_blocks(H, F, L)
    t.append(f32("decoder.embedding.weight", len(TGT), H))
    t += decoder_blocks(H, F, L)
    t += [f32("decoder.dense.weight", len(TGT), H), f32("decoder.dense.bias", len(TGT))]
    cfg = {"src_vocab_size": len(SRC), "tgt_vocab_size": len(TGT), "num_hiddens": H,
           "num_layers": L, "num_heads": NH, "ffn_num_hiddens": F, "num_steps": steps,
           "use_bias": False, "max_len": 8}
    return st_bytes(int8(t) if quantized else t, model_meta("transformer", cfg))


def tiny_bahdanau(cell="gru", E=2, H=2, L=1, steps=4, quantized=False):
    G = (3 if cell == "gru" else 4) * H
    def rnn(p, inp):
        r = []
        for l in range(L):
            r += [f32(p + "weight_ih_l%d" % l, G, inp if l == 0 else H),
                  f32(p + "weight_hh_l%d" % l, G, H), f32(p + "bias_ih_l%d" % l, G),
                  f32(p + "bias_hh_l%d" % l, G)]
        return r
    t = [f32("encoder.embedding.weight", len(SRC), E)] + rnn("encoder.rnn.", E)
    t += [f32("decoder.attention.W_k.weight", H, H), f32("decoder.attention.W_q.weight", H, H),
          f32("decoder.attention.w_v.weight", 1, H), f32("decoder.embedding.weight", len(TGT), E)]
    t += rnn("decoder.rnn.", E + H)
    t += [f32("decoder.dense.weight", len(TGT), H), f32("decoder.dense.bias", len(TGT))]
    cfg = {"src_vocab_size": len(SRC), "tgt_vocab_size": len(TGT), "embed_size": E,
           "num_hiddens": H, "num_layers": L, "num_steps": steps, "rnn": cell}
    return st_bytes(int8(t) if quantized else t, model_meta("bahdanau", cfg))


def tiny_lm(D=4, F=4, L=1, NH=2, max_len=4, bias=True, norm_first=False, act="relu",
            head_bias=True, quantized=False):
    """A decoder-only language model under PyTorch's nn.TransformerEncoderLayer names."""
    t = [f32("embedding.weight", len(TGT), D)]
    for l in range(L):
        p = "layers.%d." % l
        t.append(f32(p + "self_attn.in_proj_weight", 3 * D, D))
        if bias:
            t.append(f32(p + "self_attn.in_proj_bias", 3 * D))
        t.append(f32(p + "self_attn.out_proj.weight", D, D))
        if bias:
            t.append(f32(p + "self_attn.out_proj.bias", D))
        t.append(f32(p + "linear1.weight", F, D))
        if bias:
            t.append(f32(p + "linear1.bias", F))
        t.append(f32(p + "linear2.weight", D, F))
        if bias:
            t.append(f32(p + "linear2.bias", D))
        for n in ("norm1", "norm2"):
            t.append(f32(p + n + ".weight", D))
            if bias:
                t.append(f32(p + n + ".bias", D))
    t.append(f32("head.weight", len(TGT), D))
    if head_bias:
        t.append(f32("head.bias", len(TGT)))
    cfg = {"vocab_size": len(TGT), "d_model": D, "num_heads": NH, "num_layers": L,
           "dim_feedforward": F, "activation": act, "norm_first": norm_first,
           "layer_norm_eps": 1e-5, "bias": bias, "max_len": max_len, "pos_max_len": 5000}
    meta = {"attnlite.format": "1", "attnlite.kind": "lm", "attnlite.config": json.dumps(cfg),
            "attnlite.vocab": json.dumps(TGT)}
    return st_bytes(int8(t) if quantized else t, meta)


def tiny_vit(S=4, p=2, C=1, D=4, F=4, L=1, NH=2, K=3, norm_first=False, act="gelu"):
    """A Vision Transformer under the lab's state_dict names."""
    T = (S // p) ** 2 + 1
    t = [f32("patch_embedding.projection.0.weight", D, C, p, p),
         f32("patch_embedding.projection.0.bias", D), f32("cls_token", 1, 1, D),
         f32("pos_embedding", 1, T, D)]
    for l in range(L):
        q = "transformer_encoder.layers.%d." % l
        t += [f32(q + "self_attn.in_proj_weight", 3 * D, D), f32(q + "self_attn.in_proj_bias", 3 * D),
              f32(q + "self_attn.out_proj.weight", D, D), f32(q + "self_attn.out_proj.bias", D),
              f32(q + "linear1.weight", F, D), f32(q + "linear1.bias", F),
              f32(q + "linear2.weight", D, F), f32(q + "linear2.bias", D),
              f32(q + "norm1.weight", D), f32(q + "norm1.bias", D),
              f32(q + "norm2.weight", D), f32(q + "norm2.bias", D)]
    t += [f32("mlp_head.0.weight", D), f32("mlp_head.0.bias", D), f32("mlp_head.1.weight", K, D),
          f32("mlp_head.1.bias", K)]
    cfg = {"image_size": S, "patch_size": p, "in_channels": C, "num_classes": K, "embed_dim": D,
           "depth": L, "num_heads": NH, "dim_feedforward": F, "activation": act,
           "norm_first": norm_first, "layer_norm_eps": 1e-5, "input_scale": 0.0625}
    meta = {"attnlite.format": "1", "attnlite.kind": "vit", "attnlite.config": json.dumps(cfg),
            "attnlite.labels": json.dumps([str(k) for k in range(K)])}
    return st_bytes(t, meta)


def int8(tensors):
    """tools/quantize.py's layout on a tensor list: 2-D .weight (not GRU) -> I8 + F32 scale."""
    out = []
    for name, dtype, shape, values in tensors:
        if ((name.endswith(".weight") or name.endswith(".in_proj_weight")) and len(shape) == 2
                and ".rnn." not in name):
            rows, cols = shape
            q, scales = [], []
            for r in range(rows):
                row = values[r * cols:(r + 1) * cols]
                scale = max(abs(v) for v in row) / 127.0
                scales.append(scale)
                q += [max(-127, min(127, round(v / scale))) if scale else 0 for v in row]
            out += [(name, "I8", shape, q), (name + "_scale", "F32", [rows], scales)]
        else:
            out.append((name, dtype, shape, values))
    return out


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))


def loader():
    models = {"transformer": tiny_transformer(), "transformer_2layers": tiny_transformer(L=2, NH=1),
              "bahdanau_gru": tiny_bahdanau("gru"), "bahdanau_lstm": tiny_bahdanau("lstm", L=2)}
    for name, b in models.items():
        write("loader", name + ".safetensors", b)
    for dt, (fmt, size) in DTYPES.items():
        vals = [1.5, -2.0, 0.0, 3.25] if dt.startswith("F") else [1, -2, 0, 3] if dt != "U8" else [1, 2, 0, 3]
        write("loader", "dtype_%s.safetensors" % dt.lower(),
              st_bytes([("t", dt, [2, 2], vals)], {"k": "v"}))
    write("loader", "empty_header.safetensors", st_bytes([]))
    write("loader", "zero_dim.safetensors", st_bytes([("z", "F32", [0, 3], [])]))
    good = models["transformer"]
    hlen = struct.unpack("<Q", good[:8])[0]
    write("loader", "truncated_in_length.bin", good[:5])
    write("loader", "truncated_in_header.bin", good[:8 + hlen // 2])
    write("loader", "truncated_in_data.bin", good[:8 + hlen + 10])
    write("loader", "header_beyond_file.bin", struct.pack("<Q", hlen + 4096) + good[8:8 + hlen])
    write("loader", "bad_json.bin", struct.pack("<Q", 12) + b'{"a": [1, 2')
    write("loader", "bad_config.safetensors",
          st_bytes([f32("x", 1)], {"attnlite.kind": "transformer", "attnlite.config": "{not json"}))
    # int8 weights (tools/quantize.py's layout), drawn last so the seeds above stay as they were
    write("loader", "transformer_int8.safetensors", tiny_transformer(quantized=True))
    write("loader", "bahdanau_gru_int8.safetensors", tiny_bahdanau("gru", quantized=True))
    # language models (kind lm): post/pre-LN, relu/gelu, with and without biases, int8, and
    # an in_proj packed the wrong way round
    write("loader", "lm_post_relu.safetensors", tiny_lm())
    write("loader", "lm_pre_gelu_nobias.safetensors",
          tiny_lm(L=2, NH=1, norm_first=True, act="gelu", bias=False, head_bias=False, max_len=6))
    write("loader", "lm_int8.safetensors", tiny_lm(quantized=True))
    bad = tiny_lm()
    write("loader", "lm_in_proj_transposed.safetensors",
          bad.replace(b'"shape":[12,4]', b'"shape":[4,12]', 1))
    # vision transformers (kind vit): post-LN gelu, pre-LN relu with 3 channels
    write("loader", "vit_post_gelu.safetensors", tiny_vit())
    write("loader", "vit_pre_relu_rgb.safetensors",
          tiny_vit(S=6, p=3, C=3, L=2, NH=1, norm_first=True, act="relu"))


def png_bytes(rows):
    """A grey 8-bit PNG of rows (lists of 0..255), standard library only."""
    import zlib
    def chunk(kind, data):
        c = zlib.crc32(kind + data) & 0xffffffff
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", c)
    h, w = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def bmp_bytes(rows):
    """A 24-bit BMP of grey rows, bottom-up as the format stores them."""
    h, w = len(rows), len(rows[0])
    stride = (w * 3 + 3) // 4 * 4
    pixels = b"".join(b"".join(bytes([v, v, v]) for v in r).ljust(stride, b"\x00")
                      for r in reversed(rows))
    header = struct.pack("<2sIHHI", b"BM", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return header + info + pixels


SEVEN = [[0, 4, 12, 16, 16, 14, 0, 0], [0, 2, 6, 6, 10, 16, 0, 0], [0, 0, 0, 0, 12, 11, 0, 0],
         [0, 0, 0, 3, 16, 4, 0, 0], [0, 0, 0, 11, 13, 0, 0, 0], [0, 0, 2, 16, 6, 0, 0, 0],
         [0, 0, 8, 15, 1, 0, 0, 0], [0, 0, 13, 9, 0, 0, 0, 0]]


def image():
    ink = [[255 - v * 255 // 16 for v in r] for r in SEVEN]
    big = [[ink[y // 4][x // 4] for x in range(32)] for y in range(32)]
    corner = [[255] * 40 for _ in range(30)]
    for y in range(16):
        for x in range(16):
            corner[y + 1][x + 2] = ink[y // 2][x // 2]
    write("image", "seven_8x8.png", png_bytes(ink))
    # files of other formats given as a model: the loader names them from their first bytes
    write("loader", "png_image_as_model.safetensors", png_bytes(ink))
    write("loader", "pytorch_zip_as_model.safetensors", b"PK\x03\x04\x14\x00\x00\x00" + bytes(56))
    write("image", "seven_32x32.png", png_bytes(big))
    write("image", "seven_corner.png", png_bytes(corner))
    write("image", "seven_reversed.png", png_bytes([[255 - v for v in r] for r in big]))
    write("image", "seven_8x8.bmp", bmp_bytes(ink))
    # a 1x1 GIF, a PNG header declaring 20000 x 20000 pixels, a truncated PNG
    write("image", "pixel.gif", b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
          b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
    huge = png_bytes(ink)
    write("image", "huge_header.png", huge[:16] + struct.pack(">II", 20000, 20000) + huge[24:])
    write("image", "truncated.png", png_bytes(big)[:60])
    # fuzz_image's JPEG: a Huffman table whose 16 counts add up to over 256 codes (stb_image
    # would write past its table; refused by src/image/image_input.cpp first)
    write("image", "jpeg_huffman_over_256_codes.jpg",
          bytes([0xff, 0xd8, 0xff, 0xc4, 0x00, 0x3f, 0x00, 0x22, 0xff, 0xff, 0xff, 0x5f, 0x61, 0x2a,
                 0xa0, 0xff, 0xff]))


BOOK = ["go .", "i lost .", "he's calm .", "i'm home .", "Hi.", "I'm tired!", "Run!", "Who?",
        "Wow!", "Va !", "Je suis chez moi.", "We won, we're rich.", "Ça va ?",
        "J'ai perdu.", "Il est calme.", "zyzzyva qwxz .",
        "Déjà vu, très bien\u202fdit\u00a0!", "ÀÉÎÕÜ ΑΒΓ ПРИВЕТ İstanbul Ÿ",
        "this sentence is a great deal longer than the ten steps the model was trained on ."]
# What people type (tools/attnlite_tools/normalize.py's rules): typographic apostrophes and
# quotes, dashes, Unicode and repeated spaces, full-width forms, ligatures, zero-width marks,
# capitals, emoji.
TYPED = ["I\u2019m home.", "Don\u2019t \u201cworry\u201d \u2014 it\u2019s fine\u2026",
         "\u00abBonjour\u00bb\u202f! \u2018ok\u2019 \u201aok\u201b", "\uff37\uff48\uff45\uff52\uff45 is it\uff1f",
         "\ufb01ne \ufb02ow \ufb03", "  lots \u3000 of\u00a0\u2009 spaces\t ", "\u200bzero\u200dwidth\ufeff\u00ad",
         "\u2212 5 \u2013 3 \u2010 2", "i love you", "where is the station", "I'M HOME", "\u200b \u3000",
         "\uff28\uff25\uff2c\uff2c\uff2f, \u00c9MILE! I\u2019M HOME", "I", "TOM is HERE",
         "I\u2019m \u2764\ufe0f home \U0001F60A\U0001F44B\U0001F3FD", "\U0001F44D\u200d\U0001F3F4\U000E0067\U000E007F"]
# Found by fuzz_tokenizer: a full-width grave accent folded to '`', and only a second pass to "'".
FOUND = {"typed_fullwidth_grave": "\uff37\uff40\uff45\uff52\uff45 is it\uff1f"}
INVALID = [b"\xff\xfe bad", b"caf\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
           b"ok \xe2\x82 ."]


def tokenizer():
    # Two inputs separated by a 0x01 byte: (prediction or sentence, label) for bleu.
    pairs = [("je suis chez moi .", "je suis chez moi ."), ("va !", "va !"),
             ("il est calme .", "il est malade ."), ("", ""), ("a  b", "a b"),
             ("Déjà vu!", "déjà vu !")]
    for i, (a, b) in enumerate(pairs):
        write("tokenizer", "pair_%02d" % i, (a + "\x01" + b).encode())
    for i, s in enumerate(BOOK):
        write("tokenizer", "book_%02d" % i, s.encode())
    for i, s in enumerate(INVALID):
        write("tokenizer", "invalid_utf8_%02d" % i, s)
    for i, s in enumerate(TYPED):
        write("tokenizer", "typed_%02d" % i, s.encode())
    for name, s in FOUND.items():
        write("tokenizer", name, s.encode())


def translate():
    # First byte: bit 0 = d2l_compat, bit 1 = batch (the rest split at 0x01 bytes), bit 2 = no
    # attention, bit 3 = Bahdanau, bit 4 = beam search (size 2 + bits 5-6), bit 7 = length penalty.
    for i, s in enumerate(BOOK):
        write("translate", "book_%02d" % i, bytes([i % 2]) + s.encode())
    write("translate", "batch_00", b"\x02go .\x01i'm home .\x01he's calm .")
    write("translate", "batch_01", b"\x03Hi.\x01\x01zyzzyva qwxz .")
    write("translate", "beam_00", b"\x10i'm home .")                    # beam 2
    write("translate", "beam_01", b"\x72go .\x01i lost .\x01he's calm .")  # batch, beam 5
    write("translate", "beam_02", b"\x98Je suis chez moi.")              # Bahdanau, beam 2, penalty
    for i, s in enumerate(INVALID):
        write("translate", "invalid_utf8_%02d" % i, b"\x00" + s)
    for i, s in enumerate(TYPED):
        write("translate", "typed_%02d" % i, bytes([2 * (i % 2)]) + s.encode())
    write("translate", "empty", b"\x00")
    write("translate", "spaces", b"\x01   \xc2\xa0 ")
    write("translate", "long", b"\x00" + b"word " * 300)


def generate():
    # Bytes 0-7: mode (bit 0 sample, bit 1 attention, bits 2-3 generate / start+step /
    # partial+generate / score, bit 4 twice), max_tokens + 1, temperature / 0.0125,
    # top_k (255 = -1), top_p * 255, seed (3 bytes); then the prompt (fuzz_generate.cpp).
    def opts(mode, max_tokens=0, temperature=1.0, top_k=0, top_p=1.0, seed=0):
        return bytes([mode, max_tokens + 1, round(temperature / 0.0125), top_k % 256,
                      round(top_p * 255)]) + struct.pack("<I", seed)[:3]
    write("generate", "greedy", opts(2) + b"je suis")
    write("generate", "greedy_steps", opts(2 | 4, 5) + b"il est")
    write("generate", "sample", opts(1 | 2 | 16, 8, 0.8, 20, 0.9, 7) + b"nous avons")
    write("generate", "sample_partial", opts(1 | 8, 0, 1.5, 0, 0.5, 123) + "où est".encode())
    write("generate", "score", opts(12) + b"je suis content .")
    write("generate", "unknown_words", opts(1, 4, 1.0, 3) + b"zyzzyva qwxz")
    write("generate", "long_prompt", opts(0) + b"le chat " * 20)
    write("generate", "bad_temperature", bytes([1, 1, 0, 0, 255, 0, 0, 0]) + b"je")
    write("generate", "bad_top_p", bytes([1, 1, 80, 0, 1, 0, 0, 0]) + b"je")
    write("generate", "bad_top_k", bytes([1, 1, 80, 255, 255, 0, 0, 0]) + b"je")
    write("generate", "bad_max_tokens", bytes([0, 0, 80, 0, 255, 0, 0, 0]) + b"je")
    write("generate", "empty", opts(2))
    write("generate", "invalid_utf8", opts(2) + INVALID[0])


def capi():
    # Programs over the C API: an opcode, a slot bit, then the operation's arguments
    # (fuzz_capi.cpp reads them in this order).
    def text(b):
        b = b if isinstance(b, bytes) else b.encode()
        return bytes([len(b)]) + b
    def load(slot, which, ask=1, data=b""):
        return bytes([0, slot, which, ask]) + (text(data) if which == 4 else b"")
    def free_model(slot):
        return bytes([1, slot])
    def translator(mslot, tslot, limits=None):
        lim = bytes([1] + [v + 1 for v in limits[:3]] + [limits[3], limits[4] + 1]) if limits else b"\0"
        return bytes([2, mslot]) + lim + bytes([1, tslot])
    def translate(tslot, s, beam=1):
        o = bytes([1, 0, 0, 1, beam, 1]) if beam > 1 else b"\0"
        return bytes([4, tslot]) + o + text(s) + b"\1"
    def batch(tslot, sentences):
        return bytes([5, tslot, 0, len(sentences) + 1]) + b"".join(text(t) + b"\1" for t in sentences)
    def generator(mslot):
        return bytes([6, mslot, 0, 1, 1])
    def gen(what, prompt, sample=False):
        o = bytes([1, 5, 1, 5, 6, 4, 9, 1]) if sample else b"\0"
        return bytes([7, 0]) + o + bytes([what]) + text(prompt) + b"\1"
    def classifier(mslot):
        return bytes([8, mslot, 0, 1, 1])
    def classify(pixels):
        return bytes([9, 0, 1]) + bytes(pixels) + b"\1\1"
    # The models are the loader seeds transformer, bahdanau_lstm, lm_post_relu and
    # vit_post_gelu (4 x 4 grey images: 16 pixels).
    seven = [0, 16, 16, 8, 0, 0, 12, 4, 0, 4, 12, 0, 0, 8, 4, 0]
    # The tiny models speak SRC and TGT above ("i'm home ." -> "je suis").
    write("capi", "translate", load(0, 0) + translator(0, 0) + translate(0, "i'm home ."))
    write("capi", "translate_beam_bahdanau", load(1, 1) + translator(1, 1, (2, 3, 8, 4, 0))
          + translate(1, "he's calm .", beam=3) + bytes([13, 1, 1, 2, 3]) + text(""))
    write("capi", "batch_over_limit", load(0, 0) + translator(0, 0, (2, 1, 0, 2, 0))
          + batch(0, ["go .", "i lost .", "hi ."]))
    write("capi", "model_freed_first", load(0, 0) + translator(0, 0) + free_model(0)
          + translate(0, "go ."))
    write("capi", "wrong_kind", load(0, 2) + translator(0, 0) + generator(0) + classifier(0)
          + gen(0, "je suis") + translate(0, "go ."))
    write("capi", "generate", load(0, 2) + generator(0) + gen(1, "je suis") + gen(2, "")
          + gen(2, "") + gen(0, "il est", sample=True) + gen(3, "je suis content ."))
    write("capi", "classify", load(1, 3) + classifier(1) + classify(seven)
          + bytes([11, 1, 0, 1, 1]) + text("x"))
    write("capi", "digit_png", bytes([10, 0, 1, 1]) + text(png_bytes([[0, 255] * 4] * 8)))
    write("capi", "hostile_model", load(0, 4, data=b"\x08\0\0\0\0\0\0\0{}      ") + translator(0, 0))
    write("capi", "tokenize", bytes([12, 0]) + text("Hello, World!") + bytes([5, 1])
          + bytes([11, 0, 3, 2, 1]) + text("go"))


# A byte-pair table whose pieces spell the fuzz targets' sentence "go . i'm home".
SUBWORD_TABLE = {"end_of_word": "_", "alphabet": ["'", ".", "_", "e", "g", "h", "i", "m", "o"],
                 "merges": [["g", "o"], ["go", "_"], ["h", "o"], ["ho", "m"], ["hom", "e"],
                            ["home", "_"], [".", "_"], ["i", "'"]]}


def tiny_subword(table=SUBWORD_TABLE, H=4, F=4, L=1, NH=2, steps=6, quantized=False):
    """A sub-word Transformer: a byte-pair table in attnlite.bpe, one vocabulary, one
    embedding table shared by the encoder, the decoder and the output layer."""
    syms = []
    for x in table["alphabet"] + ["".join(m) for m in table["merges"]]:
        if x not in syms:
            syms.append(x)
    vocab = ["<unk>", "<pad>", "<bos>", "<eos>"] + syms
    V = len(vocab)
    t = encoder_blocks(H, F, L) + [f32("decoder.embedding.weight", V, H)]
    t += decoder_blocks(H, F, L) + [f32("decoder.dense.bias", V)]
    cfg = {"src_vocab_size": V, "tgt_vocab_size": V, "num_hiddens": H, "num_layers": L,
           "num_heads": NH, "ffn_num_hiddens": F, "num_steps": steps, "use_bias": False,
           "max_len": 8, "shared_embeddings": True}
    meta = {"attnlite.format": "1", "attnlite.kind": "transformer",
            "attnlite.config": json.dumps(cfg), "attnlite.src_vocab": json.dumps(vocab),
            "attnlite.tgt_vocab": json.dumps(vocab), "attnlite.bpe": json.dumps(table)}
    return st_bytes(int8(t) if quantized else t, meta)


def subword():
    """Loader seeds of sub-word models: good ones and merge tables each check refuses."""
    write("loader", "subword.safetensors", tiny_subword())
    write("loader", "subword_int8.safetensors", tiny_subword(quantized=True))
    good = SUBWORD_TABLE
    st = tiny_subword(good)
    bad = {"merge_before_symbol": dict(good, merges=[["ho", "m"]] + good["merges"]),
           "alphabet_twice": dict(good, alphabet=good["alphabet"] + ["g"]),
           "alphabet_not_a_char": dict(good, alphabet=["go"] + good["alphabet"][1:]),
           "no_end_of_word": dict(good, end_of_word="</w>")}
    hlen = struct.unpack("<Q", st[:8])[0]
    header = json.loads(st[8:8 + hlen])
    for name, table in bad.items():
        h = dict(header)
        h["__metadata__"] = dict(header["__metadata__"], **{"attnlite.bpe": json.dumps(table)})
        hb = json.dumps(h, separators=(",", ":")).encode()
        write("loader", "subword_bad_%s.safetensors" % name,
              struct.pack("<Q", len(hb)) + hb + st[8 + hlen:])


if __name__ == "__main__":
    loader()
    tokenizer()
    translate()
    image()
    generate()
    capi()
    subword()  # last: the seeds above keep their random values
