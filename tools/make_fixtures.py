"""Generate the PyTorch reference fixtures under tests/fixtures/.

    /usr/bin/python3 tools/make_fixtures.py [--out tests/fixtures]

Code: tools/attnlite_tools/fixtures_models.py, main().
"""
from attnlite_tools.fixtures_models import main

if __name__ == "__main__":
    main()
