"""What a translator does to its English input: each line of standard input normalized.

    python3 tools/normalize.py < text

Code and rules: tools/attnlite_tools/normalize.py.
"""
from attnlite_tools.normalize import main

if __name__ == "__main__":
    main()
