// attnlite — images in: decoding (PNG, JPEG, BMP, GIF through stb_image) and the digits
// model's preprocessing, the same code for the CLI and the page.
//
// digit_8x8() makes a person's drawing look like the training data, the UCI handwritten
// digits (sklearn's load_digits), whose 8x8 values are the counts of ink pixels in 4x4 blocks
// of a 32x32 bitmap normalised by NIST's programs:
//   1. grey levels in [0, 1]; the background is the median of the border pixels: on a dark
//      background (< 0.5) the ink is light, and the image is read reversed;
//   2. ink = (background - grey) / background for dark ink (reversed: (grey - background) /
//      (1 - background)), clamped to [0, 1];
//   3. the box: a square whose side is the longer side of the ink's bounding box (pixels with
//      ink > 0.05). When the ink reaches both edges of the image along that side, the image
//      is already a normalised frame (every dataset digit spans its 8 rows): the square is
//      centred on the ink and moved inside the image, so a dataset digit keeps its own
//      placement. Otherwise the ink is centred in the square on the grid of the output cells
//      (offsets in multiples of 4 of the 32 pixels, halves rounded up: as most dataset digits
//      sit), so that a drawing does not fall between two cells;
//   4. the square is scaled to 32x32 by area averaging (every source pixel counts with the
//      fraction of it a target pixel covers; outside the image there is no ink);
//   5. each 4x4 block's mean ink times 16 is one of the 64 values (0..16).
// An image without ink gives 64 zeros.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlite {

// Grey levels in [0, 1] (0 black, 1 white), row-major, top row first.
struct GreyImage {
  int width = 0, height = 0;
  std::vector<float> pixels;
  float at(int x, int y) const { return pixels[(size_t)y * width + x]; }
};

// The largest image decode_image accepts: sides up to 8192 and 16 Mpixels in all. Larger
// images are refused from their header, before any pixel is allocated.
constexpr int kMaxImageSide = 8192;
constexpr long kMaxImagePixels = 16l << 20;

// Decodes an image file's bytes (PNG, JPEG, BMP, GIF: the first frame; colour is averaged
// to grey with the Rec. 601 weights, alpha composited on white). Throws attnlite::Error:
// empty input, an unknown or corrupt format, a zero-size image, or one over the limits.
GreyImage decode_image(const uint8_t* bytes, size_t size);
GreyImage load_image(const std::string& path);  // the same from a file; errors name the path

// The UCI digits preprocessing above: out (64) in 0..16, row-major.
void digit_8x8(const GreyImage& image, float* out);

}  // namespace attnlite
