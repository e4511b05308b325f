// Backend selection: SIMD when built and supported by this CPU, else the scalar reference.
#include "attnlite/error.h"
#include "attnlite/ops/kernels.h"

#if defined(__wasm_simd128__)
#include "cpu/wasm/linear_i8_simd128.h"
#endif

namespace attnlite::ops {

#if defined(ATTNLITE_HAVE_SIMD)
const Kernels* simd_kernels_impl();  // src/cpu/simd/kernels_simd.cpp
#endif

const Kernels* simd_kernels() {
#if defined(__wasm_simd128__)
  // WebAssembly: the SIMDe tables when built in, else the scalar fp32 kernels (faster than
  // SIMDe's emulation under SIMD128, bench/RESULTS-wasm.md); the int8 linear layer is the
  // native SIMD128 kernel either way.
  static const Kernels k = [] {
#if defined(ATTNLITE_HAVE_SIMD)
    Kernels t = *simd_kernels_impl();
#else
    Kernels t = scalar_kernels();
    t.name = "scalar+simd128-i8";
#endif
    t.linear_i8 = wasm::linear_i8;
    return t;
  }();
  return &k;
#elif defined(ATTNLITE_HAVE_SIMD)
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!ok) return nullptr;
#endif
  return simd_kernels_impl();
#else
  return nullptr;
#endif
}

namespace {
const Kernels* g_active = nullptr;
}

const Kernels& kernels() {
  if (!g_active) g_active = simd_kernels() ? simd_kernels() : &scalar_kernels();
  return *g_active;
}

void set_backend(Backend b) {
  if (b == Backend::Simd) {
    if (!simd_kernels()) throw Error("SIMD kernels are not available in this build or on this CPU");
    g_active = simd_kernels();
  } else {
    g_active = &scalar_kernels();
  }
}

Backend backend() { return &kernels() == &scalar_kernels() ? Backend::Scalar : Backend::Simd; }

}  // namespace attnlite::ops
