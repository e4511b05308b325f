"""Language-model fixtures: small random lm models with their expected logits and
attention, and generations and perplexity of the shipped models/lm-fra.safetensors.

    /usr/bin/python3 tools/make_lm_fixtures.py [--out tests/fixtures] [--random-only]

Code: tools/attnlite_tools/fixtures_lm.py (make()) and fixtures_lm_readme.py (main()).
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.fixtures_lm_readme import main  # noqa: E402

if __name__ == "__main__":
    main()
