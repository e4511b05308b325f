// cuBLAS and cuBLASLt on the emulated device (cublas_v2.h, cublasLt.h), and the backend's
// library table (src/cuda/cublas_library.h) filled with them instead of dlopen's. Products
// are plain loops in fp32 with a summation order of their own, as cuBLAS's is.
#include <cstdio>
#include <cstring>
#include <string>

#include "attnlite/error.h"
#include "cublasLt.h"
#include "cuda/cublas_library.h"

namespace {

bool device(const void* p) { return p && cuda_emu::device_pointer(p); }

template <class T>
bool read_attr(T* out, const void* buf, size_t bytes) {
  if (!buf || bytes != sizeof(T)) return false;
  std::memcpy(out, buf, sizeof(T));
  return true;
}

// Column-major C (m, n) = alpha · op(A) · op(B) + beta · C, A (lda) and B (ldb) as stored.
// Each term's products are added into eight partial sums (l mod 8), then those in order.
void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* A, long lda, const float* B,
          long ldb, float beta, float* C, long ldc) {
  const long as = ta ? 1 : lda, bs = tb ? ldb : 1;  // steps along l
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const float* a = ta ? A + (long)i * lda : A + i;
      const float* b = tb ? B + j : B + (long)j * ldb;
      float p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int l = 0;
      if (as == 1 && bs == 1)
        for (; l + 8 <= k; l += 8)
          for (int u = 0; u < 8; ++u) p[u] += a[l + u] * b[l + u];
      for (; l < k; ++l) p[l % 8] += a[l * as] * b[l * bs];
      const float s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
      float& c = C[(long)j * ldc + i];
      c = beta == 0.f ? alpha * s : alpha * s + beta * c;
    }
}

}  // namespace

struct cublasContext {
  cudaStream_t stream = nullptr;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  *value = type == MAJOR_VERSION ? CUBLAS_VER_MAJOR : 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                            int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                            int lda, const void* B, cudaDataType Btype, int ldb, const void* beta,
                            void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F || computeType != CUBLAS_COMPUTE_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  if (m < 0 || n < 0 || k < 0 || lda < (ta ? k : m) || lda < 1 || ldb < (tb ? n : k) || ldb < 1 ||
      ldc < m || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (!device(A) || !device(B) || !device(C)) {
    std::fprintf(stderr, "emulated cuBLAS: GemmEx on memory that is not the device's\n");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  const auto* a = static_cast<const float*>(A);
  const auto* b = static_cast<const float*>(B);
  auto* c = static_cast<float*>(C);
  cuda_emu::submit_work(handle->stream, [=] { gemm(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc); });
  return CUBLAS_STATUS_SUCCESS;
}

// ---- cuBLASLt ----------------------------------------------------------------------------
struct cublasLtContext {};
struct cublasLtMatmulDescOpaque_t {
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const float* bias = nullptr;
  int64_t bias_stride = 0;
};
struct cublasLtMatrixLayoutOpaque_t {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t workspace = 0;
  uint32_t align[4] = {256, 256, 256, 256};  // A, B, C, D: cuBLASLt's defaults
};

size_t cublasLtGetVersion() { return CUBLAS_VER_MAJOR * 10000; }
cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t computeType,
                                        cudaDataType_t scaleType) {
  if (computeType != CUBLAS_COMPUTE_32F || scaleType != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  *desc = new cublasLtMatmulDescOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t bytes) {
  if (!d) return CUBLAS_STATUS_NOT_INITIALIZED;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: ok = read_attr(&d->ta, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: ok = read_attr(&d->tb, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = read_attr(&d->epilogue, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = read_attr(&d->bias, buf, bytes); break;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: ok = read_attr(&d->bias_stride, buf, bytes); break;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (ld < (int64_t)rows || ld < 1) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{rows, cols, ld, 1, 0};
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t bytes) {
  if (!l) return CUBLAS_STATUS_NOT_INITIALIZED;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: ok = read_attr(&l->batch, buf, bytes) && l->batch >= 1; break;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: ok = read_attr(&l->stride, buf, bytes); break;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t bytes) {
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: ok = read_attr(&p->workspace, buf, bytes); break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: ok = read_attr(&p->align[0], buf, bytes); break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: ok = read_attr(&p->align[1], buf, bytes); break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: ok = read_attr(&p->align[2], buf, bytes); break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: ok = read_attr(&p->align[3], buf, bytes); break;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

namespace {

using Layout = cublasLtMatrixLayoutOpaque_t;

// Whether op(A) (m, k) · op(B) (k, n) fits D (m, n), every batch count equal. *m, *n, *k.
bool shapes(const cublasLtMatmulDescOpaque_t& d, const Layout& a, const Layout& b, const Layout& c,
            const Layout& dl, uint64_t* m, uint64_t* n, uint64_t* k) {
  const bool ta = d.ta != CUBLAS_OP_N, tb = d.tb != CUBLAS_OP_N;
  const uint64_t am = ta ? a.cols : a.rows, ak = ta ? a.rows : a.cols;
  const uint64_t bk = tb ? b.cols : b.rows, bn = tb ? b.rows : b.cols;
  *m = am, *n = bn, *k = ak;
  return ak == bk && dl.rows == am && dl.cols == bn && c.rows == dl.rows && c.cols == dl.cols &&
         a.batch == dl.batch && b.batch == dl.batch && c.batch == dl.batch;
}

// The largest power of two (up to 256) dividing v.
uint32_t alignment(uintptr_t v) {
  uint32_t a = 256;
  while (a > 1 && v % a) a >>= 1;
  return a;
}

}  // namespace

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                                              cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* found) {
  *found = 0;
  if (!handle || !desc || !A || !B || !C || !D || !pref) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  uint64_t m, n, k;
  if (!shapes(*desc, *A, *B, *C, *D, &m, &n, &k)) return CUBLAS_STATUS_INVALID_VALUE;
  // Three algorithms that differ only in their id; each keeps the alignments it may assume.
  const int count = requested < 3 ? requested : 3;
  for (int i = 0; i < count; ++i) {
    cublasLtMatmulHeuristicResult_t r{};
    r.algo.data[0] = (uint64_t)i + 1;
    for (int j = 0; j < 4; ++j) r.algo.data[1 + j] = pref->align[j];
    r.workspaceSize = 0;
    r.state = CUBLAS_STATUS_SUCCESS;
    r.wavesCount = 1.f;
    results[i] = r;
  }
  *found = count;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t Ad, const void* B,
                              cublasLtMatrixLayout_t Bd, const void* beta, const void* C,
                              cublasLtMatrixLayout_t Cd, void* D, cublasLtMatrixLayout_t Dd,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                              cudaStream_t stream) {
  if (!handle || !desc || !Ad || !Bd || !Cd || !Dd) return CUBLAS_STATUS_NOT_INITIALIZED;
  uint64_t m, n, k;
  if (!shapes(*desc, *Ad, *Bd, *Cd, *Dd, &m, &n, &k)) return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace_bytes && !device(workspace)) return CUBLAS_STATUS_INVALID_VALUE;
  const cublasLtEpilogue_t epi = desc->epilogue;
  const bool bias = epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS;
  const bool relu = epi == CUBLASLT_EPILOGUE_RELU || epi == CUBLASLT_EPILOGUE_RELU_BIAS;
  if (!device(A) || !device(B) || !device(D) || (C && !device(C)) || (bias && !device(desc->bias))) {
    std::fprintf(stderr, "emulated cuBLASLt: a product on memory that is not the device's\n");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (C && C != D) return CUBLAS_STATUS_NOT_SUPPORTED;  // the backend writes in place
  if (algo) {  // an algorithm runs only on operands as aligned as it was chosen for
    const uintptr_t p[4] = {(uintptr_t)A, (uintptr_t)B, (uintptr_t)C, (uintptr_t)D};
    const int64_t ld[4] = {Ad->ld, Bd->ld, Cd->ld, Dd->ld};
    for (int j = 0; j < 4; ++j) {
      const uint32_t need = (uint32_t)algo->data[1 + j];
      if (need > 256 || alignment(p[j]) < need || alignment((uintptr_t)ld[j] * sizeof(float)) < need) {
        std::fprintf(stderr, "emulated cuBLASLt: operand %d is less aligned than its algorithm's %u bytes\n", j,
                     need);
        return CUBLAS_STATUS_INVALID_VALUE;
      }
    }
  }
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  const bool ta = desc->ta != CUBLAS_OP_N, tb = desc->tb != CUBLAS_OP_N;
  const Layout a = *Ad, b = *Bd, d = *Dd;
  const float* bp = bias ? desc->bias : nullptr;
  const int64_t bs = desc->bias_stride;
  const auto* af = static_cast<const float*>(A);
  const auto* bf = static_cast<const float*>(B);
  auto* df = static_cast<float*>(D);
  cuda_emu::submit_work(stream, [=] {
    for (int32_t i = 0; i < d.batch; ++i) {
      float* y = df + i * d.stride;
      gemm(ta, tb, (int)m, (int)n, (int)k, al, af + i * a.stride, a.ld, bf + i * b.stride, b.ld, be, y, d.ld);
      if (!bp && !relu) continue;
      for (uint64_t j = 0; j < n; ++j)
        for (uint64_t r = 0; r < m; ++r) {
          float& v = y[j * d.ld + r];
          if (bp) v += bp[i * bs + (int64_t)r];
          if (relu && v < 0.f) v = 0.f;
        }
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

// ---- the backend's table -------------------------------------------------------------------
namespace attnlite::cuda {

std::string cublas_soname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }
std::string cublaslt_soname() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

bool load_cublas(Cublas* out, const std::string& blas_name, const std::string& lt_name, std::string* why) {
  if (lt_name != cublaslt_soname()) {
    *why = "cannot open " + lt_name + " (the emulated device has " + cublaslt_soname() + ")";
    return false;
  }
  if (blas_name != cublas_soname()) {
    *why = "cannot open " + blas_name + " (the emulated device has " + cublas_soname() + ")";
    return false;
  }
  Cublas t;
  t.Create = &::cublasCreate_v2;
  t.Destroy = &::cublasDestroy_v2;
  t.SetStream = &::cublasSetStream_v2;
  t.GetProperty = &::cublasGetProperty;
  t.GemmEx = &::cublasGemmEx;
  t.LtGetVersion = &::cublasLtGetVersion;
  t.LtCreate = &::cublasLtCreate;
  t.LtDestroy = &::cublasLtDestroy;
  t.LtMatmul = &::cublasLtMatmul;
  t.LtMatmulAlgoGetHeuristic = &::cublasLtMatmulAlgoGetHeuristic;
  t.LtMatmulDescCreate = &::cublasLtMatmulDescCreate;
  t.LtMatmulDescDestroy = &::cublasLtMatmulDescDestroy;
  t.LtMatmulDescSetAttribute = &::cublasLtMatmulDescSetAttribute;
  t.LtMatmulPreferenceCreate = &::cublasLtMatmulPreferenceCreate;
  t.LtMatmulPreferenceDestroy = &::cublasLtMatmulPreferenceDestroy;
  t.LtMatmulPreferenceSetAttribute = &::cublasLtMatmulPreferenceSetAttribute;
  t.LtMatrixLayoutCreate = &::cublasLtMatrixLayoutCreate;
  t.LtMatrixLayoutDestroy = &::cublasLtMatrixLayoutDestroy;
  t.LtMatrixLayoutSetAttribute = &::cublasLtMatrixLayoutSetAttribute;
  t.blas_path = blas_name + " (emulated)";
  t.lt_path = lt_name + " (emulated)";
  *out = t;
  return true;
}

void prefetch_cublas() {}

const Cublas& cublas() {
  static const Cublas table = [] {
    Cublas t;
    std::string why;
    if (!load_cublas(&t, cublas_soname(), cublaslt_soname(), &why)) throw Error(why);
    return t;
  }();
  return table;
}

}  // namespace attnlite::cuda
