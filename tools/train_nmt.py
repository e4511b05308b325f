"""Reproduce the book's two English-French experiments and export the models.

    /usr/bin/python3 tools/train_nmt.py [CORPUS] [--model transformer|bahdanau|both]
                                        [--seed 0] [--threads 2]

Code: tools/attnlite_tools/train_book.py, main().
"""
from attnlite_tools.train_book import main

if __name__ == "__main__":
    main()
