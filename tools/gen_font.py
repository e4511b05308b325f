#!/usr/bin/env python3
"""Generate src/render/font_data.h: the TrueType font (a DejaVu Sans subset) figures are drawn with.

    apt-get install fonts-dejavu-core python3-fonttools
    python3 tools/gen_font.py [--font /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf] \
        [--out src/render/font_data.h]

Code: tools/attnlite_tools/font.py, main().
"""
from attnlite_tools.font import main

if __name__ == "__main__":
    main()
