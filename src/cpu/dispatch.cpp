// The kernel table in use: SIMD when built and supported by this CPU, else the scalar
// reference; use_kernels switches it.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "attnlite/error.h"
#include "attnlite/ops/kernels.h"
#include "attnlite/ops/ops.h"

#if defined(__wasm_simd128__)
#include "cpu/wasm/kernels_simd128.h"
#include "cpu/wasm/linear_i8_simd128.h"
#endif

namespace attnlite::ops {

#if defined(ATTNLITE_HAVE_SIMD)
const Kernels* simd_kernels_impl();  // src/cpu/simd/kernels_simd.cpp
#endif

#if defined(ATTNLITE_HAVE_AVX512_TABLE)
const Kernels* avx512_kernels_impl();  // src/cpu/avx512/kernels_avx512.cpp
#endif

const Kernels* simd256_kernels() {
#if defined(__wasm_simd128__) || !defined(ATTNLITE_HAVE_SIMD)
  return nullptr;
#else
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__EMSCRIPTEN__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!ok) return nullptr;
#endif
  return simd_kernels_impl();
#endif
}

const Kernels* avx512_kernels() {
#if defined(ATTNLITE_HAVE_AVX512_TABLE)
  // The CPU and the OS (its saving of the 512-bit registers: GCC's check reads XCR0) both;
  // ATTNLITE_AVX512=0 keeps the 256-bit table.
  static const Kernels* k = [] {
    const char* env = std::getenv("ATTNLITE_AVX512");
    if (env && std::strcmp(env, "0") == 0) return (const Kernels*)nullptr;
    // the 256-bit table's CPU check too: the AVX-512 table is built on it
    const bool ok = simd256_kernels() && __builtin_cpu_supports("avx512f") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return ok ? avx512_kernels_impl() : nullptr;
  }();
  return k;
#else
  return nullptr;
#endif
}

const Kernels* simd_kernels() {
#if defined(__wasm_simd128__)
  // WebAssembly: the native SIMD128 kernels of src/cpu/wasm/ (the web build's table), or the
  // SIMDe tables when built in (wasm/build.sh SIMD=on: their emulation of AVX2 under SIMD128
  // is slower than even the scalar kernels, bench/RESULTS-wasm.md); the int8 linear layer is
  // the native SIMD128 kernel either way.
  static const Kernels k = [] {
#if defined(ATTNLITE_HAVE_SIMD)
    Kernels t = *simd_kernels_impl();
#else
    Kernels t{"simd128",          wasm::linear,     nullptr,   wasm::gemm_nt, wasm::gemm_nn,
              wasm::softmax_rows, wasm::layer_norm, wasm::add, wasm::relu,    wasm::tanh,
              wasm::sigmoid,      wasm::gelu,       wasm::exp_sum,
              scalar_kernels().gru_step,  // the reference's loops over 8 units vectorise
              nullptr,            nullptr};         // fp32 weights read as stored
#endif
    t.linear_i8 = wasm::linear_i8;
    return t;
  }();
  return &k;
#elif defined(ATTNLITE_HAVE_SIMD)
#if defined(ATTNLITE_HAVE_AVX512_TABLE)
  if (const Kernels* wide = avx512_kernels()) return wide;
#endif
  return simd256_kernels();
#else
  return nullptr;
#endif
}

namespace {
// Read by every op of every session on every thread, chosen on first use: atomic, so that
// sessions starting together on several threads may all make the first choice.
std::atomic<const Kernels*> g_active{nullptr};
}

const Kernels& kernels() {
  const Kernels* k = g_active.load(std::memory_order_acquire);
  if (!k) {
    const Kernels* def = simd_kernels() ? simd_kernels() : &scalar_kernels();
    // the first choice wins; a use_kernels in between is kept
    k = g_active.compare_exchange_strong(k, def, std::memory_order_acq_rel) ? def : k;
  }
  return *k;
}

void use_kernels(KernelTable t) {
  if (t == KernelTable::Simd) {
    if (!simd_kernels()) throw Error("SIMD kernels are not available in this build or on this CPU");
    g_active.store(simd_kernels(), std::memory_order_release);
  } else {
    g_active.store(&scalar_kernels(), std::memory_order_release);
  }
}

KernelTable kernel_table() {
  return &kernels() == &scalar_kernels() ? KernelTable::Scalar : KernelTable::Simd;
}

const char* kernels_name() { return kernels().name; }

}  // namespace attnlite::ops
