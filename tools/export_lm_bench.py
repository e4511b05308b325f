"""The language model's benchmark files for bench/lm.sh: the int8 and fp32 weights every
runtime reads, the ONNX graph with past keys/values, and the expected greedy tokens.

    /usr/bin/python3 tools/export_lm_bench.py MODEL.safetensors OUT_DIR [--prompt TEXT]
        [--tokens 16] [--keep-eos]

Code: tools/attnlite_tools/lm_onnx.py, main().
"""
from attnlite_tools.lm_onnx import main

if __name__ == "__main__":
    main()
