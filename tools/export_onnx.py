#!/usr/bin/env python3
"""Export a shipped attnlite Transformer to ONNX, batch 1, for bench/wasm_bench.mjs.

    /usr/bin/python3 tools/export_onnx.py [--model models/transformer-d2l.safetensors]
                                          [--out build/onnx/transformer-d2l] [--check]

--check prints the greedy translations of the book's four sentences by the two exported
modules in PyTorch. Needs PyTorch (Debian: python3-torch) and its ONNX exporter (opset 14).

Code: tools/attnlite_tools/onnx_export.py, main_batch1().
"""
from attnlite_tools.onnx_export import main_batch1

if __name__ == "__main__":
    main_batch1()
