"""Reference beam searches of the shipped models, for attnlite's beam search tests.

    /usr/bin/python3 tools/make_beam_fixtures.py

Code: tools/attnlite_tools/fixtures_beam.py, main().
"""
from attnlite_tools.fixtures_beam import main

if __name__ == "__main__":
    main()
