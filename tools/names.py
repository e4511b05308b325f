"""Pairs that name Tom or Mary, with other names; and how many translations carry them.

    /usr/bin/python3 tools/names.py write [--split test] [--seed 0] > FILE.tsv
    /usr/bin/python3 tools/names.py check ATTNLITE_CLI FILE.tsv [--model M] [--beam K]
        [--alpha A]

Code and rules: tools/attnlite_tools/names.py.
"""
from attnlite_tools.names import main

if __name__ == "__main__":
    main()
