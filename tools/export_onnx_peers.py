"""Export an attnlite Transformer or Bahdanau model to two ONNX graphs for bench/peer_ort.mjs.

    /usr/bin/python3 tools/export_onnx_peers.py MODEL.safetensors OUT_DIR [--name NAME]

Code: tools/attnlite_tools/onnx_export.py, main_peers().
"""
from attnlite_tools.onnx_export import main_peers

if __name__ == "__main__":
    main_peers()
