"""How many translations of a split hold a word that no French sentence of the corpus holds.

    /usr/bin/python3 tools/invented.py check ATTNLITE_CLI SPLIT.tsv [--model M] [--beam K]
        [--alpha A] [--corpus fra.txt]

Code and rules: tools/attnlite_tools/invented.py.
"""
from attnlite_tools.invented import main

if __name__ == "__main__":
    main()
