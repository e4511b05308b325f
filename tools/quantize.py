"""Int8 weights for an attnlite model: per-output-channel symmetric quantization.

    /usr/bin/python3 tools/quantize.py IN.safetensors OUT.safetensors

Code: tools/attnlite_tools/quantize.py, main().
"""
from attnlite_tools.quantize import main

if __name__ == "__main__":
    main()
