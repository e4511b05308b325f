#!/usr/bin/env python3
"""Generate src/viz/font_data.h: the bitmap font the figure renderer draws text with.

The glyphs come from a Linux console font (PSF1/PSF2 with a Unicode table) of
Debian's console-setup-linux package, by default Lat15-Fixed13: an 8x13 cell
drawn from the public-domain X11 "misc-fixed" 8x13 font.

    apt-get install console-setup-linux
    python3 tools/gen_font.py [--font /usr/share/consolefonts/Lat15-Fixed13.psf.gz] \
        [--out src/viz/font_data.h] [--preview /tmp/font.pgm]

Each glyph is stored as `height` rows of one byte (bit 7 = leftmost pixel; the
font is at most 8 pixels wide) together with its ink extent, so that the renderer
can space letters proportionally (digits keep one common width so that tick
labels line up).
"""
import argparse
import gzip
import struct
import sys
import unicodedata

PSF1_MAGIC = b"\x36\x04"
PSF2_MAGIC = b"\x72\xb5\x4a\x86"

# Code points the renderer needs: printable ASCII, Latin-1 (French accents, « »),
# the Latin-9 additions (œ Œ Ÿ €) and a little typography.
WANTED = (
    list(range(0x20, 0x7F))
    + list(range(0xA0, 0x100))
    + [0x152, 0x153, 0x178, 0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D,
       0x2026, 0x20AC, 0x2212, 0x2022, 0xFFFD]
)


def read_psf(path):
    data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    if data[:2] == PSF1_MAGIC:
        mode, charsize = data[2], data[3]
        count = 512 if mode & 1 else 256
        width, height, offset = 8, charsize, 4
        has_table = bool(mode & 2)
        glyph_bytes = charsize
        pos = offset + count * glyph_bytes
        table = {}
        if has_table:
            for i in range(count):
                while pos + 1 < len(data):
                    (u,) = struct.unpack_from("<H", data, pos)
                    pos += 2
                    if u == 0xFFFF:
                        break
                    if u == 0xFFFE:  # start of sequences: skip to the terminator
                        while pos + 1 < len(data):
                            (u,) = struct.unpack_from("<H", data, pos)
                            pos += 2
                            if u == 0xFFFF:
                                break
                        break
                    table.setdefault(u, i)
    elif data[:4] == PSF2_MAGIC:
        _, _, offset, flags, count, glyph_bytes, height, width = struct.unpack_from("<8I", data, 0)
        pos = offset + count * glyph_bytes
        table = {}
        if flags & 1:
            i = 0
            while i < count and pos < len(data):
                b = data[pos]
                if b == 0xFF:
                    i += 1
                    pos += 1
                    continue
                if b == 0xFE:  # sequences: skip until the terminator
                    while pos < len(data) and data[pos] != 0xFF:
                        pos += 1
                    continue
                # one UTF-8 encoded code point
                n = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
                table.setdefault(ord(data[pos:pos + n].decode("utf-8")), i)
                pos += n
    else:
        sys.exit(f"{path}: not a PSF font")
    if width > 8:
        sys.exit(f"{path}: glyphs wider than 8 pixels are not supported")
    row_bytes = (width + 7) // 8
    glyphs = []
    for i in range(count):
        g = data[offset + i * glyph_bytes: offset + (i + 1) * glyph_bytes]
        glyphs.append([g[r * row_bytes] for r in range(height)])
    if not table:  # no Unicode table: assume the glyph index is Latin-1
        table = {i: i for i in range(min(count, 256))}
    return width, height, glyphs, table


def ink_extent(rows):
    bits = 0
    for r in rows:
        bits |= r
    if bits == 0:
        return None
    left = next(x for x in range(8) if bits & (0x80 >> x))
    right = max(x for x in range(8) if bits & (0x80 >> x))
    return left, right


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--font", default="/usr/share/consolefonts/Lat15-Fixed13.psf.gz")
    ap.add_argument("--out", default="src/viz/font_data.h")
    ap.add_argument("--preview", help="also write a PGM sheet of the chosen glyphs")
    args = ap.parse_args()

    width, height, glyphs, table = read_psf(args.font)
    missing = [cp for cp in WANTED if cp not in table]
    chosen = [cp for cp in WANTED if cp in table]
    if any(cp in missing for cp in range(0x20, 0x7F)):
        sys.exit("font lacks printable ASCII")

    digit_extents = [ink_extent(glyphs[table[ord(c)]]) for c in "0123456789"]
    digit_left = min(e[0] for e in digit_extents)
    digit_right = max(e[1] for e in digit_extents)

    entries = []
    bitmap = []
    for cp in chosen:
        rows = glyphs[table[cp]]
        ext = ink_extent(rows)
        if chr(cp).isdigit() and cp < 0x80:
            left, right = digit_left, digit_right
        elif ext is None:  # space-like
            left, right = 0, max(1, width // 2 - 2)
        else:
            left, right = ext
        advance = right - left + 2  # ink plus one column of spacing
        entries.append((cp, len(bitmap), left, advance))
        bitmap.extend(rows)

    name = args.font.rsplit("/", 1)[-1]
    out = []
    out.append("// Generated by tools/gen_font.py from %s -- do not edit." % name)
    out.append("//")
    out.append("// Glyphs: the Linux console font %s of Debian's console-setup-linux" % name)
    out.append("// package, drawn from the X11 \"misc-fixed\" 8x13 bitmap font. Its licence, as")
    out.append("// stated in that package's copyright.fonts: \"Public domain. Donated (in")
    out.append("// unspecified order) by H. Kagotani, BIZNET Poland, Inc., Dmitry Yu.")
    out.append("// Bolkhovityanov, Thomas Bagli, PCS Computer Systeme - West Germany, Takahashi")
    out.append("// N., Mark J. Reed, P. Peterlin, Mark Leisher, Roman Czyborra, Kosta Kostis and")
    out.append("// others.\" The console-setup copyright adds: \"All console fonts are public")
    out.append("// domain by nature.\"")
    out.append("#pragma once")
    out.append("#include <cstdint>")
    out.append("")
    out.append("namespace attnlite::viz::font_data {")
    out.append("")
    out.append("inline constexpr int kCellWidth = %d;" % width)
    out.append("inline constexpr int kCellHeight = %d;" % height)
    # Baseline: the bottom row of 'H' ink plus one.
    hrows = glyphs[table[ord("H")]]
    base = max(r for r in range(height) if hrows[r]) + 1
    top = min(r for r in range(height) if hrows[r])
    out.append("inline constexpr int kBaseline = %d;   // rows above the baseline" % base)
    out.append("inline constexpr int kCapTop = %d;     // first row of capital letters' ink" % top)
    out.append("")
    out.append("struct Glyph {")
    out.append("  char32_t code_point;")
    out.append("  uint16_t offset;   // index of the first row in kBitmap")
    out.append("  uint8_t left;      // first ink column (drawing starts here)")
    out.append("  uint8_t advance;   // pen advance in pixels")
    out.append("};")
    out.append("")
    out.append("// Sorted by code point.")
    out.append("inline constexpr Glyph kGlyphs[] = {")
    for cp, off, left, adv in entries:
        ch = chr(cp)
        note = ch if cp >= 0x20 and ch not in "\\" and cp not in (0xA0, 0xAD) else "U+%04X" % cp
        out.append("    {0x%04X, %d, %d, %d},  // %s" % (cp, off, left, adv, note))
    out.append("};")
    out.append("")
    # Combining marks that follow a base letter (decomposed, NFD text) are drawn as
    # the precomposed glyph when the font has one.
    chosen_set = set(chosen)
    compose = []
    for cp in chosen:
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = [int(h, 16) for h in d.split()]
            if len(parts) == 2 and parts[0] in chosen_set and 0x300 <= parts[1] < 0x370:
                compose.append((parts[0], parts[1], cp))
    compose.sort()
    out.append("struct Composition {")
    out.append("  char32_t base, mark, composed;")
    out.append("};")
    out.append("")
    out.append("// Sorted by (base, mark).")
    out.append("inline constexpr Composition kCompositions[] = {")
    for b, m, c in compose:
        out.append("    {0x%04X, 0x%04X, 0x%04X},  // %s" % (b, m, c, chr(c)))
    out.append("};")
    out.append("")
    # A hollow box for code points the font does not have.
    box = [0] * height
    top_row, bottom_row = max(0, base - (base - top) - 1), base - 1
    for r in range(top_row, bottom_row + 1):
        box[r] = 0x84 if width >= 6 else 0x90
    box[top_row] = box[bottom_row] = 0xFC if width >= 6 else 0xF0
    out.append("// Drawn for code points the font lacks: a hollow box on the baseline.")
    out.append("inline constexpr uint8_t kMissingRows[kCellHeight] = {%s};" % ", ".join("0x%02X" % b for b in box))
    out.append("inline constexpr int kMissingAdvance = 7;")
    out.append("")
    out.append("// %d rows of %d pixels per glyph, bit 7 = leftmost pixel." % (height, width))
    out.append("inline constexpr uint8_t kBitmap[] = {")
    for i in range(0, len(bitmap), height):
        out.append("    " + ", ".join("0x%02X" % b for b in bitmap[i:i + height]) + ",")
    out.append("};")
    out.append("")
    out.append("}  // namespace attnlite::viz::font_data")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print("%s: %d glyphs (%dx%d); not in the font: %s" % (
        args.out, len(entries), width, height, " ".join("U+%04X" % c for c in missing) or "none"))

    if args.preview:
        cols = 32
        rows_n = (len(entries) + cols - 1) // cols
        W, H = cols * (width + 2), rows_n * (height + 2)
        img = bytearray([255] * (W * H))
        for k, (cp, off, left, adv) in enumerate(entries):
            gx, gy = (k % cols) * (width + 2) + 1, (k // cols) * (height + 2) + 1
            for r in range(height):
                for x in range(width):
                    if bitmap[off + r] & (0x80 >> x):
                        img[(gy + r) * W + gx + x] = 0
        with open(args.preview, "wb") as f:
            f.write(b"P5 %d %d 255\n" % (W, H) + bytes(img))
