// RGBA8 images, PNG output and anti-aliased text for the figure renderer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnlite/error.h"  // what every render function throws

namespace attnlite::render {

using Rgb = std::array<uint8_t, 3>;

inline constexpr Rgb kWhite{255, 255, 255};
inline constexpr Rgb kBlack{0, 0, 0};

// An axis-aligned pixel rectangle: columns [x, x + w), rows [y, y + h).
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool empty() const { return w <= 0 || h <= 0; }
  bool contains(int px, int py) const { return px >= x && px < x + w && py >= y && py < y + h; }
  int right() const { return x + w; }   // one past the last column
  int bottom() const { return y + h; }  // one past the last row
  int cx() const { return x + w / 2; }
  int cy() const { return y + h / 2; }
};

// Row-major RGBA8 pixels, top row first.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;

  Image() = default;
  // A width x height image filled with an opaque colour (white by default).
  Image(int w, int h, Rgb fill = kWhite);

  uint8_t* px(int x, int y) { return rgba.data() + (static_cast<size_t>(y) * width + x) * 4; }
  const uint8_t* px(int x, int y) const {
    return rgba.data() + (static_cast<size_t>(y) * width + x) * 4;
  }
  Rgb rgb(int x, int y) const {
    const uint8_t* p = px(x, y);
    return {p[0], p[1], p[2]};
  }
};

// PNG bytes of the image (stb_image_write); throws attnlite::Error on failure.
std::vector<uint8_t> encode_png(const Image& image);
// Writes the image as a PNG file; throws attnlite::Error naming the path on failure.
void write_png(const std::string& path, const Image& image);

// ---- text ---------------------------------------------------------------------
// Text is UTF-8, drawn anti-aliased in DejaVu Sans (matplotlib's default font), embedded in
// the library (src/render/font_data.h; no font file is read). Malformed bytes (stray
// continuation bytes, truncated or overlong sequences, surrogates, values above U+10FFFF)
// decode to '?', one per bad byte; a base letter followed by a combining accent draws as the
// precomposed letter; code points the embedded font lacks are drawn as a hollow box (□).
// The font covers printable ASCII, Latin-1 (French accents, « »), œ Œ Ÿ €, ‘ ’ “ ” • – — …
// → and −. Sizes are in pixels: a size in points at a resolution is points_to_px(pt, dpi).
std::u32string decode_utf8(std::string_view utf8);

inline float points_to_px(float points, int dpi) { return points * static_cast<float>(dpi) / 72.f; }

enum class TextDirection {
  Horizontal,  // left to right
  Up,          // rotated 90 degrees counter-clockwise: read from bottom to top
};

struct TextSize {
  int w = 0, h = 0;
};

// Vertical metrics of the font at a size, in pixels: the ascent above the baseline, the
// descent below it (positive), and the line height (their sum, rounded up).
struct FontMetrics {
  float ascent = 0.f, descent = 0.f;
  int line_height = 0;
};
FontMetrics font_metrics(float size_px);

// The advance width of the text (kerning included) in pixels at size_px.
float text_width(std::string_view utf8, float size_px);
// Size of the horizontal text box: the advance width rounded up, and the line height (empty
// text: 0 x 0). size_px must be in (0, 1000].
TextSize text_size(std::string_view utf8, float size_px);
int text_line_height(float size_px);

// Draws text with its box's top-left corner at (x, y), the baseline font_metrics().ascent
// below the top (for TextDirection::Up the box is the rotated one: text_size's h wide and
// w high). Glyphs are blended into the image by their coverage; pixels outside the image
// are clipped. Returns the box.
Rect draw_text(Image& image, int x, int y, std::string_view utf8, Rgb color, float size_px,
               TextDirection direction = TextDirection::Horizontal);

}  // namespace attnlite::render
