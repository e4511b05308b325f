"""Train the book's Transformer on the whole English-French corpus and export it.

    /usr/bin/python3 tools/train_corpus.py [CORPUS] [--hiddens 128 --layers 3 --heads 4
        --ffn 512 --dropout 0.1] [--epochs 30] [--minutes 70] [--threads 2] [--seed 0]
        [--name transformer-fra] [--bench]

Code: tools/attnlite_tools/train_corpus.py, main().
"""
from attnlite_tools.train_corpus import main

if __name__ == "__main__":
    main()
