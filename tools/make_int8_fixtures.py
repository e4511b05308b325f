"""Int8 models and their PyTorch reference translations, for attnlite's int8 tests.

    /usr/bin/python3 tools/make_int8_fixtures.py [CORPUS]

Code: tools/attnlite_tools/fixtures_translation.py, main_int8().
"""
from attnlite_tools.fixtures_translation import main_int8

if __name__ == "__main__":
    main_int8()
