"""Write a base-size d2l Transformer with random weights as an attnlite model file.

    /usr/bin/python3 tools/make_random_model.py OUT.safetensors [--seed 0]
        [--num-hiddens 512] [--num-layers 6] [--num-heads 8] [--ffn 2048]
        [--vocab 32000] [--num-steps 20]

The network is the book's EncoderDecoder(TransformerEncoder, TransformerDecoder) (the d2l
modules of tools/attnlite_tools/d2l), with PyTorch's default initialisation under a fixed
seed; the file has the metadata of tools/export.py (attnlite.format/kind/config/src_vocab/tgt_vocab/...). The
vocabularies are fake: "<unk> <pad> <bos> <eos> w4 w5 ...", the same list on both sides.

For benchmarks only (decode a fixed number of steps): the bias of the output layer for
<eos> is set to -1e4, so greedy decoding never stops early. With 6+6 layers and 32000-word
vocabularies the file is about 370 MB: write it into a build folder, never commit it.
"""
import argparse
import os
import time

import torch

from . import d2l
from . import export


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
    config = export.transformer_config(tokens, tokens, a.num_hiddens, a.num_layers,
                                       a.num_heads, a.ffn, a.num_steps)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    n = export.save_model(
        net, a.out, "transformer", config, tokens, tokens,
        {"random_seed": a.seed, "eos_bias": -1e4},
        license="Random weights (tools/make_random_model.py), for benchmarks only")
    params = sum(t.numel() for t in net.state_dict().values())
    print(f"{a.out}: {params / 1e6:.1f} M parameters, {n / 1e6:.0f} MB, "
          f"{time.time() - t0:.1f} s")
