"""Train a small decoder-only (GPT-style) French language model and export it.

    /usr/bin/python3 tools/train_lm.py [CORPUS] [--d-model 128 --layers 3 --heads 4
        --ffn 512 --dropout 0.1 --activation relu] [--epochs 40] [--minutes 40]
        [--threads 1] [--seed 0] [--name lm-fra] [--bench] [--train-limit N]

Code: tools/attnlite_tools/train_lm.py, main().
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.train_lm import main  # noqa: E402

if __name__ == "__main__":
    main()
