"""Vision Transformer fixtures: the patch embedding, small random vit models (and one of
the lab's shape, int8) with their logits, attention and rollout, and the shipped
models/vit-digits.safetensors on its test split (JSON and PNG digits).

    /usr/bin/python3 tools/make_vit_fixtures.py [--out tests/fixtures] [--random-only]

Code: tools/attnlite_tools/fixtures_vit.py (make()) and fixtures_vit_readme.py (main()).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.fixtures_vit_readme import main  # noqa: E402

if __name__ == "__main__":
    main()
