// attnlite_peak — this machine's single-core roofline:
//  * FMA peak: an unrolled loop of 256-bit FMAs (the width the SIMD kernels use) on
//    8, 10, 12 and 14 independent accumulators, so that both FMA pipes stay busy past the
//    FMA latency; GFLOP/s = 16 flop per FMA.
//  * Memory bandwidth, STREAM-like (single thread, best of 5): copy a[i] = b[i], triad
//    a[i] = b[i] + s·c[i] over 3 × 128 MiB arrays (counted as STREAM counts: 2 and 3 ×
//    4 bytes per element, write-allocate traffic not counted), and a read-only sum over a
//    4 MiB array (the GEMV's weight matrix, 2048 × 512 floats, which stays in L3) and over
//    128 MiB (DRAM), the latter also as four streams side by side (its quarters, as the
//    256-bit GEMV reads a large matrix), which some memory systems serve faster than one.
// Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), as Google Benchmark's
// default rates use CPU time: on a machine shared with other busy processes, wall time
// would count the slices given to them. Wall-clock figures are printed alongside.
// Usage: attnlite_peak [seconds per FMA measurement, default 0.5]
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <simde/x86/avx2.h>
#include <simde/x86/fma.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Stamp {
  double cpu, wall;
};

Stamp now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return {(double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec, wall};
}

// Elapsed {cpu, wall} seconds.
Stamp since(Stamp t0) {
  const Stamp t = now();
  return {t.cpu - t0.cpu, t.wall - t0.wall};
}

template <int A>
__attribute__((noinline)) float fma_loop(long iters, float seed) {
  simde__m256 acc[A];
  for (int j = 0; j < A; ++j) acc[j] = simde_mm256_set1_ps(seed + (float)j);
  const simde__m256 m = simde_mm256_set1_ps(0.999999f), c = simde_mm256_set1_ps(1e-6f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < A; ++j) acc[j] = simde_mm256_fmadd_ps(acc[j], m, c);
  }
  simde__m256 s = acc[0];
  for (int j = 1; j < A; ++j) s = simde_mm256_add_ps(s, acc[j]);
  float out[8];
  simde_mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with 512-bit FMAs (AVX-512F), compiled for it alone and run only where the CPU has
// it: whether the wider vectors raise the roof here (some cores split them into two 256-bit
// halves, for the same FLOP/s). GFLOP/s = 32 flop per FMA.
template <int A>
__attribute__((noinline, target("avx512f"))) float fma512_loop(long iters, float seed) {
  __m512 acc[A];
  for (int j = 0; j < A; ++j) acc[j] = _mm512_set1_ps(seed + (float)j);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < A; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, c);
  }
  __m512 s = acc[0];
  for (int j = 1; j < A; ++j) s = _mm512_add_ps(s, acc[j]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}
#endif

// Best of 3 {cpu, wall} GFLOP/s: loop(iters, seed) runs iters x A FMAs of `flop` each.
template <int A>
Stamp fma_gflops(double seconds, float (*loop)(long, float) = fma_loop<A>, double flop_per = 16.0) {
  long iters = 1 << 20;
  volatile float sink = 0.f;
  Stamp best{0.0, 0.0};
  // Calibrate, then measure 3 times and keep the best.
  for (;;) {
    const Stamp t0 = now();
    sink = sink + loop(iters, 1.f);
    if (since(t0).cpu > seconds / 4) break;
    iters *= 2;
  }
  for (int rep = 0; rep < 3; ++rep) {
    const Stamp t0 = now();
    sink = sink + loop(iters, 1.f + (float)rep);
    const Stamp t = since(t0);
    const double flop = (double)iters * A * flop_per;
    best.cpu = flop / t.cpu * 1e-9 > best.cpu ? flop / t.cpu * 1e-9 : best.cpu;
    best.wall = flop / t.wall * 1e-9 > best.wall ? flop / t.wall * 1e-9 : best.wall;
  }
  return best;
}

// Best of reps {cpu, wall} seconds.
template <class F>
Stamp best_of(int reps, F&& f) {
  Stamp best{1e30, 1e30};
  for (int r = 0; r < reps; ++r) {
    const Stamp t0 = now();
    f();
    const Stamp t = since(t0);
    best.cpu = t.cpu < best.cpu ? t.cpu : best.cpu;
    best.wall = t.wall < best.wall ? t.wall : best.wall;
  }
  return best;
}

__attribute__((noinline)) float read_sum(const float* p, long n) {
  simde__m256 s0 = simde_mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (long i = 0; i + 32 <= n; i += 32) {
    s0 = simde_mm256_add_ps(s0, simde_mm256_loadu_ps(p + i));
    s1 = simde_mm256_add_ps(s1, simde_mm256_loadu_ps(p + i + 8));
    s2 = simde_mm256_add_ps(s2, simde_mm256_loadu_ps(p + i + 16));
    s3 = simde_mm256_add_ps(s3, simde_mm256_loadu_ps(p + i + 24));
  }
  float out[8];
  simde_mm256_storeu_ps(out, simde_mm256_add_ps(simde_mm256_add_ps(s0, s1), simde_mm256_add_ps(s2, s3)));
  return out[0] + out[5];
}

// The same sum over four quarters of p at once: four sequential streams.
__attribute__((noinline)) float read_sum4(const float* p, long n) {
  const long q = n / 4 / 8 * 8;
  simde__m256 s0 = simde_mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (long i = 0; i + 8 <= q; i += 8) {
    s0 = simde_mm256_add_ps(s0, simde_mm256_loadu_ps(p + i));
    s1 = simde_mm256_add_ps(s1, simde_mm256_loadu_ps(p + q + i));
    s2 = simde_mm256_add_ps(s2, simde_mm256_loadu_ps(p + 2 * q + i));
    s3 = simde_mm256_add_ps(s3, simde_mm256_loadu_ps(p + 3 * q + i));
  }
  float out[8];
  simde_mm256_storeu_ps(out, simde_mm256_add_ps(simde_mm256_add_ps(s0, s1), simde_mm256_add_ps(s2, s3)));
  return out[0] + out[5];
}

}  // namespace

int main(int argc, char** argv) {
  const double secs = argc > 1 ? std::atof(argv[1]) : 0.5;
  std::printf("FMA peak, 256-bit FMAs, single thread (GFLOP/s, CPU time | wall time):\n");
  const Stamp g[4] = {fma_gflops<8>(secs), fma_gflops<10>(secs), fma_gflops<12>(secs),
                      fma_gflops<14>(secs)};
  const int accs[4] = {8, 10, 12, 14};
  Stamp peak{0.0, 0.0};
  for (int i = 0; i < 4; ++i) {
    std::printf("  %2d accumulators: %7.1f | %7.1f\n", accs[i], g[i].cpu, g[i].wall);
    peak.cpu = g[i].cpu > peak.cpu ? g[i].cpu : peak.cpu;
    peak.wall = g[i].wall > peak.wall ? g[i].wall : peak.wall;
  }
  std::printf("  peak:            %7.1f | %7.1f\n", peak.cpu, peak.wall);
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) {
    std::printf("FMA peak, 512-bit FMAs (AVX-512F), single thread:\n");
    const Stamp z[3] = {fma_gflops<8>(secs, fma512_loop<8>, 32.0),
                        fma_gflops<12>(secs, fma512_loop<12>, 32.0),
                        fma_gflops<16>(secs, fma512_loop<16>, 32.0)};
    const int zaccs[3] = {8, 12, 16};
    for (int i = 0; i < 3; ++i)
      std::printf("  %2d accumulators: %7.1f | %7.1f\n", zaccs[i], z[i].cpu, z[i].wall);
  } else {
    std::printf("FMA peak, 512-bit FMAs: this CPU has no AVX-512F\n");
  }
#endif

  const long n = 32L << 20;  // 32 Mi floats = 128 MiB per array
  std::vector<float> a(n, 1.f), b(n, 2.f), c(n, 3.f);
  volatile float sink = 0.f;
  const Stamp t_copy = best_of(5, [&] {
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
    for (long i = 0; i < n; ++i) pa[i] = pb[i];
    sink = sink + pa[n / 3];
  });
  const Stamp t_triad = best_of(5, [&] {
    float* __restrict pa = a.data();
    const float* __restrict pb = b.data();
    const float* __restrict pc = c.data();
    for (long i = 0; i < n; ++i) pa[i] = pb[i] + 0.5f * pc[i];
    sink = sink + pa[n / 5];
  });
  const Stamp t_read = best_of(5, [&] { sink = sink + read_sum(b.data(), n); });
  const Stamp t_read4 = best_of(5, [&] { sink = sink + read_sum4(b.data(), n); });
  const long small = 2048L * 512;  // the GEMV weights: 4 MiB
  const int small_reps = 200;
  const Stamp t_read_small = best_of(5, [&] {
    for (int r = 0; r < small_reps; ++r) sink = sink + read_sum(c.data(), small);
  });
  auto gbs = [](double bytes, Stamp t) { return Stamp{bytes / t.cpu * 1e-9, bytes / t.wall * 1e-9}; };
  const Stamp copy = gbs(2.0 * 4.0 * n, t_copy), triad = gbs(3.0 * 4.0 * n, t_triad),
              rd = gbs(4.0 * n, t_read), rd4 = gbs(4.0 * (n / 4 / 8 * 8 * 4), t_read4),
              rd_small = gbs(4.0 * small * small_reps, t_read_small);
  std::printf("Memory bandwidth, single thread, best of 5 (GB/s, CPU time | wall time):\n");
  std::printf("  copy  (128 MiB arrays): %6.1f | %6.1f\n", copy.cpu, copy.wall);
  std::printf("  triad (128 MiB arrays): %6.1f | %6.1f\n", triad.cpu, triad.wall);
  std::printf("  read  (128 MiB):        %6.1f | %6.1f\n", rd.cpu, rd.wall);
  std::printf("  read  (4 x 32 MiB):     %6.1f | %6.1f\n", rd4.cpu, rd4.wall);  // side by side
  std::printf("  read  (4 MiB, in L3):   %6.1f | %6.1f\n", rd_small.cpu, rd_small.wall);
  return 0;
}
