#include "render/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlite::render::detail {

double nice_step(double min_step, bool integer) {
  if (!(min_step > 0.0) || !std::isfinite(min_step)) return 1.0;
  if (integer && min_step <= 1.0) return 1.0;
  const double mag = std::pow(10.0, std::floor(std::log10(min_step)));
  static const double kMultiples[] = {1.0, 2.0, 2.5, 5.0, 10.0};
  for (double m : kMultiples) {
    const double step = m * mag;
    if (integer && std::fabs(step - std::round(step)) > 1e-9) continue;
    if (step >= min_step * (1.0 - 1e-9)) return step;
  }
  return 10.0 * mag;
}

std::vector<double> ticks_in(double lo, double hi, double step) {
  std::vector<double> out;
  if (!(step > 0.0) || !std::isfinite(lo) || !std::isfinite(hi) || hi < lo) return out;
  const double eps = step * 1e-6;
  const double first = std::ceil((lo - eps) / step);
  for (double k = first;; k += 1.0) {
    double v = k * step;
    if (v > hi + eps || out.size() > 1000) break;
    if (std::fabs(v) < eps) v = 0.0;  // no "-0"
    out.push_back(v);
  }
  return out;
}

int decimals_for_step(double step) {
  for (int d = 0; d < 6; ++d) {
    const double scaled = step * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return d;
  }
  return 6;
}

std::string format_tick(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(value));
  std::string s(buf);
  // A value that rounds to zero prints without a sign.
  bool all_zero = true;
  for (char c : s)
    if (c >= '1' && c <= '9') all_zero = false;
  if (value < 0 && !all_zero) s = "\xE2\x88\x92" + s;  // U+2212 MINUS SIGN
  return s;
}

}  // namespace attnlite::render::detail
