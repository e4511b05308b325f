"""The Vision Transformer's benchmark files for bench/vit.sh: the test digits every runtime
reads, the reference logits and the ONNX graph for onnxruntime-node.

    /usr/bin/python3 tools/export_vit_bench.py MODEL.safetensors FIXTURE.json OUT_DIR

Code: tools/attnlite_tools/vit_bench.py, main().
"""
from attnlite_tools.vit_bench import main

if __name__ == "__main__":
    main()
