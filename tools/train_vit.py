"""Train the lab report's Vision Transformer on scikit-learn's 8x8 digits and export it.

    /usr/bin/python3 tools/train_vit.py [--embed-dim 64 --depth 3 --heads 4 --ffn 128
        --dropout 0.1 --activation gelu] [--epochs 150] [--lr 2e-3] [--weight-decay 0.05]
        [--batch-size 64] [--shift 0] [--threads 1] [--seed 0] [--name vit-digits]
        [--minutes 30] [--bench]

Code: tools/attnlite_tools/train_vit.py, main().
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from attnlite_tools.train_vit import main  # noqa: E402

if __name__ == "__main__":
    main()
