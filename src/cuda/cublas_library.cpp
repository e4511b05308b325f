// cuBLAS and cuBLASLt through dlopen (cublas_library.h): the libraries are opened once and never
// closed; a failed load is remembered and reported the same way on every call.
#include "cuda/cublas_library.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <future>
#include <mutex>
#include <type_traits>
#include <vector>

#include "attnlite/error.h"

namespace attnlite::cuda {

// The overload GemmExFn names is the header's (compile-time only: nothing is linked).
static_assert(std::is_same_v<decltype(static_cast<GemmExFn>(&::cublasGemmEx)), GemmExFn>);

std::string cublas_soname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }
std::string cublaslt_soname() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

namespace {

// The folder of the shared object that holds `symbol`, with a final '/', or "".
std::string folder_of(const void* symbol) {
  Dl_info info{};
  if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) return "";
  const std::string f = info.dli_fname;
  const size_t slash = f.rfind('/');
  return slash == std::string::npos ? "" : f.substr(0, slash + 1);
}

// dlopen `name` as given, then in the CUDA runtime's folder, then in the toolkit's.
void* open_library(const std::string& name, std::string* why) {
  std::vector<std::string> tries{name};
  if (name.find('/') == std::string::npos) {
    const std::string runtime = folder_of(reinterpret_cast<const void*>(&cudaGetDeviceCount));
    if (!runtime.empty()) tries.push_back(runtime + name);
#ifdef ATTNLITE_CUDA_LIBRARY_DIR
    tries.push_back(std::string(ATTNLITE_CUDA_LIBRARY_DIR) + "/" + name);
#endif
  }
  std::string first_error;
  for (const auto& path : tries) {
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    if (first_error.empty()) first_error = e ? e : "unknown reason";
  }
  *why = "cannot load " + name + " (" + first_error + ")";
  return nullptr;
}

template <class F>
bool resolve(void* lib, const char* name, const std::string& file, F* f, std::string* why) {
  dlerror();
  void* p = dlsym(lib, name);
  if (!p) {
    *why = file + " has no function " + name;
    return false;
  }
  *f = reinterpret_cast<F>(p);
  return true;
}

std::string path_of(void* fn) {
  Dl_info info{};
  return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "";
}

struct Loaded {
  Cublas table;
  std::string error;  // empty: loaded
};

Loaded load_default() {
  Loaded r;
  load_cublas(&r.table, cublas_soname(), cublaslt_soname(), &r.error);  // false: error set
  return r;
}

std::once_flag g_once;
std::shared_future<Loaded> g_loaded;

}  // namespace

bool load_cublas(Cublas* out, const std::string& blas_name, const std::string& lt_name,
                 std::string* why) {
  std::string reason;
  void* lt = open_library(lt_name, &reason);
  void* blas = lt ? open_library(blas_name, &reason) : nullptr;
  Cublas t;
#define ATTNLITE_RESOLVE(lib, file, member, symbol) resolve(lib, #symbol, file, &t.member, &reason)
  const bool good =
      blas && ATTNLITE_RESOLVE(lt, lt_name, LtGetVersion, cublasLtGetVersion) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtCreate, cublasLtCreate) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtDestroy, cublasLtDestroy) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmul, cublasLtMatmul) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulDescCreate, cublasLtMatmulDescCreate) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulDescDestroy, cublasLtMatmulDescDestroy) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatrixLayoutCreate, cublasLtMatrixLayoutCreate) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy) &&
      ATTNLITE_RESOLVE(lt, lt_name, LtMatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute) &&
      ATTNLITE_RESOLVE(blas, blas_name, Create, cublasCreate_v2) &&
      ATTNLITE_RESOLVE(blas, blas_name, Destroy, cublasDestroy_v2) &&
      ATTNLITE_RESOLVE(blas, blas_name, SetStream, cublasSetStream_v2) &&
      ATTNLITE_RESOLVE(blas, blas_name, GetProperty, cublasGetProperty) &&
      ATTNLITE_RESOLVE(blas, blas_name, GemmEx, cublasGemmEx);
#undef ATTNLITE_RESOLVE
  if (!good) {
    *why = reason;
    return false;
  }
  t.blas_path = path_of(reinterpret_cast<void*>(t.Create));
  t.lt_path = path_of(reinterpret_cast<void*>(t.LtCreate));
  *out = std::move(t);
  return true;
}

void prefetch_cublas() {
  std::call_once(g_once, [] { g_loaded = std::async(std::launch::async, load_default).share(); });
}

const Cublas& cublas() {
  prefetch_cublas();
  const Loaded& r = g_loaded.get();
  if (!r.error.empty()) throw Error("cuBLAS: " + r.error);
  return r.table;
}

}  // namespace attnlite::cuda
