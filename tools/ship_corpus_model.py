"""Quantize the whole-corpus Transformer and record its BLEU in the shipped file.

    /usr/bin/python3 tools/ship_corpus_model.py ATTNLITE_CLI [--beam 4]

Code: tools/attnlite_tools/corpus_eval.py, main_ship().
"""
from attnlite_tools.corpus_eval import main_ship

if __name__ == "__main__":
    main_ship()
