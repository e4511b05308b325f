"""PyTorch reference for an attnlite language model file (tools/train_lm.py).

    /usr/bin/python3 tools/lm_ref.py MODEL.safetensors [CORPUS] [--prompts "je|il est|..."]
        [--threads 1]

Code: tools/attnlite_tools/lm_ref.py, main().
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.lm_ref import main  # noqa: E402

if __name__ == "__main__":
    main()
