"""The train/dev/test split of the whole corpus, and corpus BLEU-4.

    /usr/bin/python3 tools/splits.py [CORPUS] --write DIR   # DIR/{dev,test}.tsv

Code: tools/attnlite_tools/splits.py, main().
"""
from attnlite_tools.splits import main

if __name__ == "__main__":
    main()
