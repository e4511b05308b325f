// attnlite — what the plain timing programs (attnlite_bench_generate, attnlite_bench_classify)
// share: their clocks, the median of their runs, and main's handling of the library's errors.
#pragma once
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

namespace attnlite::bench {

// This process's CPU time, in seconds (every thread's).
inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// run(argc, argv), with what it throws (a model the loader refuses, a device that is not
// there) as "PROGRAM: error: ..." on stderr and exit status 1.
inline int main_guarded(const char* program, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace attnlite::bench
