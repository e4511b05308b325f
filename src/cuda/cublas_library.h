// attnlite — cuBLAS and cuBLASLt, loaded when the GPU is first asked for rather than when the
// program starts. libcublasLt is over 500 MB: linked, the dynamic loader maps and relocates it
// before main (~140 ms and ~200 MB resident on the development machine) in every process of a
// CUDA build, --device cpu included. Loaded here, a CPU run never pays it, and a GPU run loads
// it on a thread of its own while the CUDA context is created and the weights are uploaded.
//
// The table holds the functions the backend calls, typed from the headers' own declarations.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

namespace attnlite::cuda {

// cublasGemmEx has a C++ overload in cublas_api.h (a cudaDataType compute type); this is the
// library's own entry point.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);

struct Cublas {
  // libcublas
  decltype(&::cublasCreate_v2) Create = nullptr;
  decltype(&::cublasDestroy_v2) Destroy = nullptr;
  decltype(&::cublasSetStream_v2) SetStream = nullptr;
  decltype(&::cublasGetProperty) GetProperty = nullptr;
  GemmExFn GemmEx = nullptr;
  // libcublasLt
  decltype(&::cublasLtGetVersion) LtGetVersion = nullptr;
  decltype(&::cublasLtCreate) LtCreate = nullptr;
  decltype(&::cublasLtDestroy) LtDestroy = nullptr;
  decltype(&::cublasLtMatmul) LtMatmul = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) LtMatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmulDescCreate) LtMatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) LtMatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) LtMatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) LtMatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) LtMatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) LtMatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) LtMatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) LtMatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) LtMatrixLayoutSetAttribute = nullptr;
  // The files they came from (dladdr), for messages and the tests.
  std::string blas_path, lt_path;
};

// The sonames the headers were built for: libcublas.so.<CUBLAS_VER_MAJOR>, and Lt's.
std::string cublas_soname();
std::string cublaslt_soname();

// Fills *out from the two libraries, cuBLASLt's first (libcublas needs it). Each is tried by
// its name (LD_LIBRARY_PATH, the executable's run path, the system's cache), then beside the
// CUDA runtime in use, then in the toolkit's library folder at build time. false: *why says
// which library or function was missing, and dlerror's reason; *out is left as it was.
bool load_cublas(Cublas* out, const std::string& blas_name, const std::string& lt_name,
                 std::string* why);

// Starts loading the two libraries on a thread of their own, once per process (later calls
// return at once). The CUDA op set calls it once it knows a device is there.
void prefetch_cublas();

// The loaded table: waits for the prefetch (starting it if none was), then returns the same
// table for the process's life. Throws attnlite::Error with load_cublas's reason.
const Cublas& cublas();

}  // namespace attnlite::cuda
