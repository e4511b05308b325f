#!/usr/bin/env python3
"""Generate src/viz/font_data.h: the bitmap font the figure renderer draws text with.

    python3 tools/gen_font.py [--font /usr/share/consolefonts/Lat15-Fixed13.psf.gz] \
        [--out src/viz/font_data.h] [--preview /tmp/font.pgm]

Code: tools/attnlite_tools/font.py, main().
"""
from attnlite_tools.font import main

if __name__ == "__main__":
    main()
