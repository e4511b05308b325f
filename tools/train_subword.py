"""Train the book's Transformer on byte-pair pieces of the cased corpus (resumable).

    /usr/bin/python3 tools/train_subword.py --bpe TABLE.json [--minutes 60]   # train / go on
    /usr/bin/python3 tools/train_subword.py --bpe TABLE.json --finish          # export

Code: tools/attnlite_tools/train_subword.py, main().
"""
from attnlite_tools.train_subword import main

if __name__ == "__main__":
    main()
