"""Text from an attnlite language model file by attnlite's generation rule (greedy, or
seeded sampling with temperature, top-k and top-p).

    /usr/bin/python3 tools/lm_sample.py MODEL.safetensors "prompt" [--max-tokens N]
        [--temperature T] [--top-k K] [--top-p P] [--seed S] [--greedy] [--json]
    /usr/bin/python3 tools/lm_sample.py --self-test

Code: tools/attnlite_tools/sample.py, main().
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.sample import main  # noqa: E402

if __name__ == "__main__":
    main()
