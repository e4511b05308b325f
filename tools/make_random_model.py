"""Write a base-size d2l Transformer with random weights as an attnlite model file.

    /usr/bin/python3 tools/make_random_model.py OUT.safetensors [--seed 0]
        [--num-hiddens 512] [--num-layers 6] [--num-heads 8] [--ffn 2048]
        [--vocab 32000] [--num-steps 20]

The network is the book's EncoderDecoder(TransformerEncoder, TransformerDecoder) from
tools/d2l_ref.py, with PyTorch's default initialisation under a fixed seed; the file has the
metadata of tools/export.py (attnlite.format/kind/config/src_vocab/tgt_vocab/...). The
vocabularies are fake: "<unk> <pad> <bos> <eos> w4 w5 ...", the same list on both sides.

For benchmarks only (decode a fixed number of steps): the bias of the output layer for
<eos> is set to -1e4, so greedy decoding never stops early. With 6+6 layers and 32000-word
vocabularies the file is about 370 MB: write it into a build folder, never commit it.
"""
import argparse
import json
import os
import sys
import time
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import d2l_ref as d2l  # noqa: E402
import export  # noqa: E402
import safetensors_io as st  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-hiddens", type=int, default=512)
    ap.add_argument("--num-layers", type=int, default=6)
    ap.add_argument("--num-heads", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--num-steps", type=int, default=20)
    a = ap.parse_args()

    t0 = time.time()
    torch.manual_seed(a.seed)
    net = d2l.make_transformer(a.vocab, a.vocab, num_hiddens=a.num_hiddens,
                               num_layers=a.num_layers, num_heads=a.num_heads,
                               ffn_num_hiddens=a.ffn, dropout=0.0)
    tokens = ["<unk>", "<pad>", "<bos>", "<eos>"] + [f"w{i}" for i in range(4, a.vocab)]
    with torch.no_grad():
        net.decoder.dense.bias[3] = -1e4  # never <eos>: decode runs a fixed number of steps
    config = OrderedDict([("src_vocab_size", a.vocab), ("tgt_vocab_size", a.vocab),
                          ("num_hiddens", a.num_hiddens), ("num_layers", a.num_layers),
                          ("num_heads", a.num_heads), ("ffn_num_hiddens", a.ffn),
                          ("num_steps", a.num_steps), ("use_bias", False), ("max_len", 1000)])
    assert list(config) == export.CONFIG_KEYS["transformer"]
    tensors = OrderedDict((k, v.detach().float().contiguous())
                          for k, v in net.state_dict().items())
    meta = OrderedDict([
        ("attnlite.format", export.FORMAT),
        ("attnlite.kind", "transformer"),
        ("attnlite.config", json.dumps(config)),
        ("attnlite.src_vocab", json.dumps(tokens)),
        ("attnlite.tgt_vocab", json.dumps(tokens)),
        ("attnlite.license", "Random weights (tools/make_random_model.py), for benchmarks only"),
        ("attnlite.training", json.dumps({"random_seed": a.seed, "eos_bias": -1e4})),
    ])
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    n = st.save(a.out, tensors, meta)
    params = sum(t.numel() for t in tensors.values())
    print(f"{a.out}: {params / 1e6:.1f} M parameters, {n / 1e6:.0f} MB, "
          f"{time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
