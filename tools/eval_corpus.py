"""PyTorch's BLEU of an exported model on a split, to check `attnlite eval` against.

    /usr/bin/python3 tools/eval_corpus.py MODEL.safetensors SPLIT.tsv [--compare HYP.tsv]

Code: tools/attnlite_tools/corpus_eval.py, main().
"""
from attnlite_tools.corpus_eval import main

if __name__ == "__main__":
    main()
