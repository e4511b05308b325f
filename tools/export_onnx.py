#!/usr/bin/env python3
"""Export a shipped attnlite Transformer to ONNX, batch 1, for bench/wasm_bench.mjs.

    /usr/bin/python3 tools/export_onnx.py [--model models/transformer-d2l.safetensors]
                                          [--out build/onnx/transformer-d2l] [--check]

    /usr/bin/python3 tools/export_onnx.py --model models/transformer-fra-bpe.safetensors \
                                          --out build/onnx/transformer-fra-bpe   # for
                                          # bench/wasm_bench_page.mjs

--check prints the greedy translations of the book's four sentences by the two exported
modules in PyTorch (a sub-word model: the same sentences cased, in byte-pair pieces as
tools/bpe.py segments them, the translation detokenized). int8 files are dequantized to
fp32 first. Needs PyTorch (Debian: python3-torch) and its ONNX exporter (opset 14).

Code: tools/attnlite_tools/onnx_export.py, main_batch1().
"""
from attnlite_tools.onnx_export import main_batch1

if __name__ == "__main__":
    main_batch1()
