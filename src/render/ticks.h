// Tick placement and tick label formatting (internal).
#pragma once

#include <string>
#include <vector>

namespace attnlite::render::detail {

// A "nice" step (1, 2, 2.5 or 5 times a power of ten; integer steps only when
// `integer`) no smaller than min_step.
double nice_step(double min_step, bool integer);

// Multiples of `step` inside [lo, hi] (with a little tolerance at the ends).
std::vector<double> ticks_in(double lo, double hi, double step);

// Number of decimals that shows every multiple of `step` exactly (at most 6).
int decimals_for_step(double step);

// Like matplotlib's ScalarFormatter: fixed decimals and a real minus sign (U+2212).
std::string format_tick(double value, int decimals);

}  // namespace attnlite::render::detail
