"""A tiny sub-word Transformer with random weights and PyTorch's translations of it.

    /usr/bin/python3 tools/make_bpe_fixtures.py [CORPUS]

Code: tools/attnlite_tools/fixtures_bpe.py, main().
"""
from attnlite_tools.fixtures_bpe import main

if __name__ == "__main__":
    main()
