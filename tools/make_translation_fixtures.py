"""Reference translations of the shipped models, for attnlite's end-to-end parity tests.

    /usr/bin/python3 tools/make_translation_fixtures.py [CORPUS]

Code: tools/attnlite_tools/fixtures_translation.py, main().
"""
from attnlite_tools.fixtures_translation import main

if __name__ == "__main__":
    main()
