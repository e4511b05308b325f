"""Pairs that name one number, respelled in digits; and how many translations carry them.

    /usr/bin/python3 tools/numerals.py write [--split test] [--variants 3] [--seed 0] > FILE.tsv
    /usr/bin/python3 tools/numerals.py check ATTNLITE_CLI FILE.tsv [--model M] [--beam K]
        [--alpha A]

Code and rules: tools/attnlite_tools/numerals.py.
"""
from attnlite_tools.numerals import main

if __name__ == "__main__":
    main()
