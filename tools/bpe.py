"""Byte-pair encoding (d2l 15.6) on the cased corpus: learn a merge table, segment text.

    /usr/bin/python3 tools/bpe.py learn [CORPUS] --merges 8000 --out FILE.json
    /usr/bin/python3 tools/bpe.py segment FILE.json < text

Code: tools/attnlite_tools/bpe.py, main().
"""
from attnlite_tools.bpe import main

if __name__ == "__main__":
    main()
