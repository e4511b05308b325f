#include "attnlite/image_input.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/safetensors.h"  // read_file

#if ATTNLITE_NO_IMAGE_DECODING
// The small core (cmake -DATTNLITE_MINIMAL=ON) has no decoder: digit_8x8 takes grey levels.
namespace attnlite {
GreyImage decode_image(const uint8_t*, size_t) {
  throw Error("image decoding is not in this build (the small core, ATTNLITE_MINIMAL): "
              "give the 8x8 input values instead");
}
}  // namespace attnlite
#else
// The only stb_image implementation in the library; its functions stay private to this file.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_MAX_DIMENSIONS 8192
#include <stb_image.h>

namespace attnlite {

namespace {

uint32_t be32(const uint8_t* p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
uint32_t le32(const uint8_t* p) { return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]; }
int be16(const uint8_t* p) { return p[0] << 8 | p[1]; }
int le16(const uint8_t* p) { return p[1] << 8 | p[0]; }

// stb_image's reason for its last failure, or a word where it gives none.
std::string failure_reason() {
  const char* r = stbi_failure_reason();
  return r && *r ? r : "damaged data";
}

// The size an image file's header declares, read before stb_image sees it (which refuses
// large images without saying so): the format's name, or nullptr when it is none of the four.
const char* declared_size(const uint8_t* b, size_t n, long* w, long* h) {
  if (n >= 24 && !std::memcmp(b, "\x89PNG\r\n\x1a\n", 8)) {
    *w = be32(b + 16);
    *h = be32(b + 20);
    return "PNG";
  }
  if (n >= 10 && (!std::memcmp(b, "GIF87a", 6) || !std::memcmp(b, "GIF89a", 6))) {
    *w = le16(b + 6);
    *h = le16(b + 8);
    return "GIF";
  }
  if (n >= 26 && b[0] == 'B' && b[1] == 'M') {
    if (le32(b + 14) == 12) {  // OS/2's BITMAPCOREHEADER: 16-bit sizes
      *w = le16(b + 18);
      *h = le16(b + 20);
    } else {  // a negative height is a top-down image (long may be 32 bits: INT32_MIN stays huge)
      const int64_t sh = (int32_t)le32(b + 22);
      *w = (int32_t)le32(b + 18);
      *h = (long)std::min<int64_t>(sh < 0 ? -sh : sh, INT32_MAX);
    }
    return "BMP";
  }
  if (n >= 4 && b[0] == 0xFF && b[1] == 0xD8) {  // JPEG: the first start-of-frame marker
    size_t i = 2;
    while (i + 9 < n) {
      if (b[i] != 0xFF) return "JPEG";
      const int marker = b[i + 1];
      if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
        *h = be16(b + i + 5);
        *w = be16(b + i + 7);
        return "JPEG";
      }
      i += 2 + (size_t)be16(b + i + 2);
    }
    return "JPEG";
  }
  return nullptr;
}

// Walks a PNG's chunks before stb_image sees them (the first two found by fuzz_image):
//   - a chunk longer than the bytes left is an error here: stb_image 2.27 would first grow
//     its buffer to the declared length (2 GB from a 100-byte file);
//   - zero-length IDAT chunks (legal) are left out of a copy: stb_image would hand memcpy a
//     null destination (undefined behaviour);
//   - a file that ends before its IEND chunk is truncated: stb_image reads the missing bytes
//     as a chunk of type "\0\0\0\0" and fails with an empty reason.
// Returns the copy, or nothing when there is nothing to leave out.
std::vector<uint8_t> checked_png(const uint8_t* b, size_t n) {
  std::vector<size_t> empty;  // offsets of the 12-byte empty IDAT chunks
  bool end = false;
  for (size_t at = 8; at < n;) {
    if (n - at < 8)
      throw Error("corrupt PNG image: the file ends inside a chunk's header (" +
                  std::to_string(n - at) + " of its 8 bytes)");
    const size_t len = be32(b + at);
    if (len > n - at - 8 || n - at - 8 - len < 4)
      throw Error("corrupt PNG image: chunk '" + std::string((const char*)b + at + 4, 4) + "' of " +
                  std::to_string(len) + " bytes runs past the end of the file");
    if (len == 0 && !std::memcmp(b + at + 4, "IDAT", 4)) empty.push_back(at);
    if (!std::memcmp(b + at + 4, "IEND", 4)) {
      end = true;
      break;
    }
    at += 12 + len;
  }
  if (!end) throw Error("corrupt PNG image: the file ends before its IEND chunk (it was cut short)");
  std::vector<uint8_t> out;
  if (empty.empty()) return out;
  out.reserve(n);
  size_t from = 0;
  for (size_t at : empty) {
    out.insert(out.end(), b + from, b + at);
    from = at + 12;
  }
  out.insert(out.end(), b + from, b + n);
  return out;
}

// A BMP's header, palette and rows of pixels, read as stb_image 2.27 reads them, must lie in
// the file and agree: stb_image reads bytes past the end as zeros, so a file cut short (found
// by fuzz_image: 57 bytes declaring 2048 x 4106 pixels) decoded as a picture, mostly black;
// and its palette is a stack array that only the file's entries fill, so a pixel of a colour
// past them, or pixels that start inside the header (a palette of -1 entries), read
// uninitialised memory. The last row need not be padded. Headers, compressions and depths
// that stb_image refuses are left to it.
void check_bmp(const uint8_t* b, size_t n) {
  if (n < 18) return;
  const uint32_t hsz = le32(b + 14);
  if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124) return;
  uint64_t header = 14 + (uint64_t)hsz;  // the file's header, the info header, bit masks
  const auto header_cut = [&] {
    return Error("corrupt BMP image: the file ends inside its header (" + std::to_string(n) + " of its " +
                 std::to_string(header) + " bytes)");
  };
  if (n < header) throw header_cut();
  const int32_t offset = (int32_t)le32(b + 10);  // where the pixels start
  if (offset < 0) return;
  int64_t w, h;
  int bpp;
  if (hsz == 12) {
    if (le16(b + 22) != 1) return;
    w = le16(b + 18), h = le16(b + 20), bpp = le16(b + 24);
  } else {
    if (le16(b + 26) != 1) return;
    w = (int32_t)le32(b + 18), h = (int32_t)le32(b + 22), bpp = le16(b + 28);
    const int32_t compress = (int32_t)le32(b + 30);
    if (compress == 1 || compress == 2 || compress >= 4 || (compress == 3 && bpp != 16 && bpp != 32))
      return;
    if ((hsz == 40 || hsz == 56) && compress == 3) header += 12;  // the three masks
    if (n < header) throw header_cut();
  }
  if (h < 0) h = -h;  // top-down
  if (w <= 0 || h <= 0 || w > kMaxImageSide || h > kMaxImageSide) return;
  const bool paletted = hsz == 12 ? bpp < 24 : bpp < 16;
  int64_t psize = 0, width;  // the palette's colours; the bytes of a row's pixels
  if (paletted) {
    if (bpp != 1 && bpp != 4 && bpp != 8) return;
    // stb_image counts an OS/2 palette's entries from byte 38 instead of 26: it reads 4 colours
    // fewer than the file has, and a pixel of one of those (or of any, below 5) gets
    // uninitialised memory
    if (hsz == 12)
      throw Error("BMP image with an OS/2 header and a palette (" + std::to_string(bpp) +
                  " bits a pixel): not supported; save it as a Windows BMP or a PNG");
    const int64_t room = (int64_t)offset - 14 - (int64_t)hsz;  // stb_image's count, rounded down
    psize = room >= 0 ? room / 4 : -((3 - room) / 4);
    if (psize < 0)
      throw Error("corrupt BMP image: its pixels start at byte " + std::to_string(offset) + ", inside its " +
                  std::to_string(header) + "-byte header");
    if (psize == 0 || psize > 256) return;
    width = bpp == 1 ? (w + 7) / 8 : bpp == 4 ? (w + 1) / 2 : w;
  } else {
    if ((uint64_t)offset != header || (bpp != 16 && bpp != 24 && bpp != 32)) return;
    width = w * (bpp / 8);
  }
  const int64_t row = width + (bpp == 32 ? 0 : (4 - width % 4) % 4);
  const uint64_t end = (uint64_t)offset + (uint64_t)(row * (h - 1) + width);
  if (end > n)
    throw Error("corrupt BMP image: its " + std::to_string(w) + "x" + std::to_string(h) + " pixels at " +
                std::to_string(bpp) + " bits end at byte " + std::to_string(end) + ", the file has " +
                std::to_string(n) + " bytes (it was cut short, or its header is damaged)");
  if (!paletted || psize >= (1 << bpp)) return;
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t* r = b + offset + y * row;
    for (int64_t x = 0; x < w; ++x) {
      const int v = bpp == 8 ? r[x] : bpp == 4 ? (r[x / 2] >> (x % 2 ? 0 : 4)) & 15 : (r[x / 8] >> (7 - x % 8)) & 1;
      if (v >= psize)
        throw Error("corrupt BMP image: a pixel is colour " + std::to_string(v) + " of a palette of " +
                    std::to_string(psize));
    }
  }
}

// The image's LZW codes (from its code size byte at b[p], its sub-blocks known to end in the
// file) must give all its w x h pixels before the end code or the end of the data: stb_image
// 2.27 returns the picture either way, the pixels it was not given blank (a stream cut short
// inside a whole file). The codes are read as stb_image reads them, counting the pixels each
// one stands for (a dictionary entry's length: its prefix's plus one) without decoding them;
// a stream stb_image refuses on its own (no clear code first, a code past the dictionary, a
// code size over 12) is left to its error.
void check_gif_codes(const uint8_t* b, size_t p, long w, long h) {
  const int min_size = b[p++];
  if (min_size > 12) return;
  const int64_t need = (int64_t)w * h;  // up to 65535^2: past a 32-bit long
  const int clear = 1 << min_size;
  std::vector<uint16_t> len(8192, 1);  // the pixels each code stands for (literals: 1)
  int size = min_size + 1, avail = clear + 2, old = -1;
  bool first = true;
  int64_t got = 0;
  uint32_t bits = 0;
  int have = 0;
  size_t left = 0;  // bytes left in the current sub-block
  for (;;) {
    if (got >= need) return;
    if (have < size) {
      if (left == 0) {
        left = b[p++];
        if (left == 0) break;  // the empty sub-block: the data ended without an end code
      }
      --left;
      bits |= (uint32_t)b[p++] << have;
      have += 8;
      continue;
    }
    const int code = (int)(bits & ((1u << size) - 1));
    bits >>= size;
    have -= size;
    if (code == clear) {
      size = min_size + 1;
      avail = clear + 2;
      old = -1;
      first = false;
    } else if (code == clear + 1) {
      break;
    } else if (code <= avail) {
      if (first) return;
      if (old >= 0) {
        if (avail >= 8192) return;
        len[(size_t)avail] = (uint16_t)std::min<int>(len[(size_t)old] + 1, 8192);
        ++avail;
      } else if (code == avail) {
        return;
      }
      got += len[(size_t)code];
      if ((avail & ((1 << size) - 1)) == 0 && avail <= 0x0FFF) ++size;
      old = code;
    } else {
      return;
    }
  }
  throw Error("corrupt GIF image: its data ends after " + std::to_string(got) + " of its " + std::to_string(w) +
              "x" + std::to_string(h) + " pixels");
}

// A GIF's first image (the one stb_image decodes) must end in the file: stb_image 2.27 reads
// bytes past the end as zeros and returns the rows it got, the rest blank (a file cut in half
// decoded as half a picture). The blocks before it (colour tables, extensions) and its own
// data sub-blocks are walked to the empty sub-block that ends them; a file that ends first is
// an error. Blocks stb_image does not know are left to it.
void check_gif_frame(const uint8_t* b, size_t n) {
  const auto cut = [] {
    return Error("corrupt GIF image: the file ends before its first image does (it was cut short)");
  };
  const auto table = [](uint8_t flags) -> size_t { return flags & 0x80 ? 3u << ((flags & 7) + 1) : 0; };
  // sub-blocks from p: each a length byte then that many bytes, until a length of 0
  const auto sub_blocks = [&](size_t p) {
    for (;;) {
      if (p >= n) throw cut();
      const size_t len = b[p++];
      if (len == 0) return p;
      if (len > n - p) throw cut();
      p += len;
    }
  };
  if (n < 13) throw cut();
  size_t p = 13 + table(b[10]);
  for (;;) {
    if (p >= n) throw cut();
    if (b[p] == 0x21) {  // an extension: its label, then its sub-blocks
      if (n - p < 2) throw cut();
      if (b[p + 1] == 0xF9) {  // graphic control: as stb_image reads it, 4 bytes then the
        p += 2;                // sub-blocks, or another size skipped with none after it
        if (p >= n) throw cut();
        const size_t len = b[p++];
        if (len != 4) {
          p += len;
          continue;
        }
        p = sub_blocks(p + 4);
      } else {
        p = sub_blocks(p + 2);
      }
    } else if (b[p] == 0x2C) {  // the image: its descriptor, colour table, code size, data
      if (n - p < 10) throw cut();
      const long w = le16(b + p + 5), h = le16(b + p + 7);
      p += 10 + table(b[p + 9]);
      if (p >= n) throw cut();
      sub_blocks(p + 1);
      check_gif_codes(b, p, w, h);
      return;
    } else {
      return;  // the trailer or an unknown block: stb_image's own error
    }
  }
}

#if !defined(STBI_NO_JPEG)  // its only caller is JPEG decoding
// stb_image 2.27 builds a JPEG Huffman table from its 16 code counts without checking that
// they add up to at most 256 (found by fuzz_image): it writes past its 257-entry list of code
// sizes. Every table of every DHT segment is checked here first, read as stb_image reads it
// (table after table while the segment's length lasts; bytes past the end of the file read as
// 0, as its reader returns them). Markers are found as a decoder finds them: 0xFF followed by
// a byte that is not a fill byte (0xFF) or a stuffed zero.
void check_jpeg_huffman(const uint8_t* b, size_t n) {
  const auto at = [&](size_t i) -> unsigned { return i < n ? b[i] : 0u; };
  size_t i = 2;
  while (i + 1 < n) {
    const unsigned m = b[i + 1];
    if (b[i] != 0xFF || m == 0xFF) {  // entropy-coded data, or a fill byte before a marker
      ++i;
      continue;
    }
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD9)) {  // no length: stuffing, TEM, RSTn, SOI, EOI
      i += 2;
      continue;
    }
    const size_t len = (at(i + 2) << 8) | at(i + 3);
    if (m == 0xC4) {  // DHT
      long left = (long)len - 2;
      size_t p = i + 4;
      for (int table = 1; left > 0; ++table) {
        unsigned codes = 0;
        for (size_t k = 0; k < 16; ++k) codes += at(p + 1 + k);
        if (codes > 256)
          throw Error("corrupt JPEG image: Huffman table " + std::to_string(table) + " declares " +
                      std::to_string(codes) + " codes (at most 256)");
        p += 17 + codes;
        left -= 17 + (long)codes;
      }
    }
    i += 2 + len;
  }
}
#endif  // !STBI_NO_JPEG

}  // namespace

GreyImage decode_image(const uint8_t* bytes, size_t size) {
  if (!bytes || size == 0) throw Error("empty image file");
  if (size > (size_t)1 << 30) throw Error("image file is over 1 GiB");
  long dw = -1, dh = -1;
  const char* format = declared_size(bytes, size, &dw, &dh);
  if (!format) throw Error("not an image attnlite can read (PNG, JPEG, BMP or GIF)");
#if defined(STBI_NO_JPEG)
  // Builds without the JPEG decoder (the WebAssembly module, for its size: wasm/build.sh).
  if (format[0] == 'J')
    throw Error("JPEG images are not supported in this build; decode the image with the browser and use digitFromRgba");
#endif
  if (dw == 0 || dh == 0)
    throw Error(std::string(format) + " image of " + std::to_string(dw) + "x" + std::to_string(dh) + " pixels: it has no pixels");
  if (dw > kMaxImageSide || dh > kMaxImageSide || (dw > 0 && dw * dh > kMaxImagePixels))
    throw Error(std::string(format) + " image of " + std::to_string(dw) + "x" + std::to_string(dh) +
                " pixels is over the limit (" + std::to_string(kMaxImageSide) + " per side, " +
                std::to_string(kMaxImagePixels) + " pixels)");
#if !defined(STBI_NO_JPEG)
  if (format[0] == 'J') check_jpeg_huffman(bytes, size);
#endif
  if (format[0] == 'B') check_bmp(bytes, size);
  if (format[0] == 'G') check_gif_frame(bytes, size);
  std::vector<uint8_t> cleaned;
  if (format[0] == 'P') {
    cleaned = checked_png(bytes, size);
    if (!cleaned.empty()) {
      bytes = cleaned.data();
      size = cleaned.size();
    }
  }
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes, (int)size, &w, &h, &comp))
    throw Error(std::string("corrupt ") + format + " image: " + failure_reason());
  if (format[0] == 'B' && h < 0 && h > INT_MIN) h = -h;  // a top-down BMP
  if (w <= 0 || h <= 0) throw Error("the image has no pixels (" + std::to_string(w) + "x" + std::to_string(h) + ")");
  if (w > kMaxImageSide || h > kMaxImageSide || (long)w * h > kMaxImagePixels)
    throw Error("image of " + std::to_string(w) + "x" + std::to_string(h) + " pixels is over the limit (" +
                std::to_string(kMaxImageSide) + " per side, " + std::to_string(kMaxImagePixels) + " pixels)");
  stbi_uc* px = stbi_load_from_memory(bytes, (int)size, &w, &h, &comp, 4);
  if (!px) throw Error(std::string("corrupt ") + format + " image: " + failure_reason());
  GreyImage g;
  g.width = w;
  g.height = h;
  g.pixels.resize((size_t)w * h);
  for (size_t i = 0; i < g.pixels.size(); ++i) {
    const stbi_uc* p = px + i * 4;
    const float a = p[3] / 255.f;
    const float grey = (0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]) / 255.f;
    g.pixels[i] = grey * a + (1.f - a);  // on white paper
  }
  stbi_image_free(px);
  return g;
}

}  // namespace attnlite
#endif  // ATTNLITE_NO_IMAGE_DECODING

namespace attnlite {

GreyImage load_image(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);  // "cannot open 'PATH'" when absent
  try {
    return decode_image(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void digit_8x8(const GreyImage& im, float* out) {
  std::fill(out, out + 64, 0.f);
  const int W = im.width, H = im.height;
  if (W <= 0 || H <= 0 || im.pixels.size() != (size_t)W * H) throw Error("digit_8x8: empty image");
  // 1. the background: the median of the border pixels
  std::vector<float> border;
  for (int x = 0; x < W; ++x) {
    border.push_back(im.at(x, 0));
    if (H > 1) border.push_back(im.at(x, H - 1));
  }
  for (int y = 1; y < H - 1; ++y) {
    border.push_back(im.at(0, y));
    if (W > 1) border.push_back(im.at(W - 1, y));
  }
  std::nth_element(border.begin(), border.begin() + border.size() / 2, border.end());
  const float bg = border[border.size() / 2];
  const bool reversed = bg < 0.5f;
  // 2. ink in [0, 1]
  std::vector<float> ink((size_t)W * H);
  int x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const float g = im.at(x, y);
      float v = reversed ? (g - bg) / std::max(1.f - bg, 1e-6f) : (bg - g) / std::max(bg, 1e-6f);
      v = std::min(1.f, std::max(0.f, v));
      ink[(size_t)y * W + x] = v;
      if (v > 0.05f) {
        x0 = std::min(x0, x);
        x1 = std::max(x1, x);
        y0 = std::min(y0, y);
        y1 = std::max(y1, y);
      }
    }
  if (x1 < 0) return;  // no ink
  // 3. the box: a square of the bounding box's longer side, centred on it; an image whose ink
  // reaches both of its edges along that side is already a frame, and the square stays inside it
  const int bw = x1 - x0 + 1, bh = y1 - y0 + 1, side = std::max(bw, bh);
  double left = x0 + bw / 2.0 - side / 2.0, top = y0 + bh / 2.0 - side / 2.0;
  const bool framed = (bh == side && y0 == 0 && y1 == H - 1) || (bw == side && x0 == 0 && x1 == W - 1);
  if (framed) {
    if (W >= side) left = std::min(std::max(left, 0.0), (double)(W - side));
    if (H >= side) top = std::min(std::max(top, 0.0), (double)(H - side));
  } else {
    // centred on the 4-pixel grid of the output cells, halves rounded up (as most dataset
    // digits sit: a 5-cell-wide digit in columns 2..6)
    const double wpx = bw * 32.0 / side, hpx = bh * 32.0 / side;
    const double ox = 4 * std::floor((32 - wpx) / 8 + 0.5), oy = 4 * std::floor((32 - hpx) / 8 + 0.5);
    left = x0 - ox * side / 32.0;
    top = y0 - oy * side / 32.0;
  }
  // 4. the square to 32 x 32 by area averaging (ink outside the image counts as none)
  const double step = side / 32.0;
  float canvas[32 * 32];
  for (int ty = 0; ty < 32; ++ty) {
    const double sy0 = top + ty * step, sy1 = sy0 + step;
    for (int tx = 0; tx < 32; ++tx) {
      const double sx0 = left + tx * step, sx1 = sx0 + step;
      double sum = 0;
      for (int y = std::max(0, (int)std::floor(sy0)); y < (int)std::ceil(sy1) && y < H; ++y) {
        const double fy = std::min(sy1, y + 1.0) - std::max(sy0, (double)y);
        if (fy <= 0) continue;
        for (int x = std::max(0, (int)std::floor(sx0)); x < (int)std::ceil(sx1) && x < W; ++x) {
          const double fx = std::min(sx1, x + 1.0) - std::max(sx0, (double)x);
          if (fx > 0) sum += fx * fy * ink[(size_t)y * W + x];
        }
      }
      canvas[ty * 32 + tx] = (float)(sum / (step * step));
    }
  }
  // 5. 4x4 blocks: mean ink x 16
  for (int by = 0; by < 8; ++by)
    for (int bx = 0; bx < 8; ++bx) {
      float sum = 0;
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) sum += canvas[(by * 4 + y) * 32 + bx * 4 + x];
      out[by * 8 + bx] = sum;  // mean (sum / 16) x 16
    }
}

}  // namespace attnlite
