// A CUDA device emulated on the CPU, for running the CUDA backend's own sources (src/cuda)
// where no GPU is. The .cu files are compiled as C++ (cuda_emu.cmake rewrites their launch
// syntax); every kernel thread runs as a fiber, a block's threads one after another on the
// launching thread, switching at __syncthreads() and at warp shuffles. What it checks that a
// plain CPU run would not:
//   - device memory is unreadable to host code outside the device's work (a host read of a
//     device pointer faults), and a kernel's pointer arguments must be device memory;
//   - __syncthreads() must be reached by every thread of the block, a full-mask shuffle by
//     every lane of the warp (else the launch stops with the kernel's name);
//   - launch limits (threads per block, grid sizes, 48 KiB of dynamic shared memory unless the
//     kernel opted in to more, up to 227 KiB) give cudaErrorInvalidConfiguration as a GPU
//     does, and dynamic shared memory starts as NaN;
//   - stream capture: synchronous calls, allocation and waits inside a capture invalidate it,
//     and a graph replays exactly the work captured, in order;
//   - a missing barrier, in one of two runs: a block's threads take their turns in index
//     order, or in reverse with ATTNLITE_CUDA_EMU_ORDER=reverse, so a read of what another
//     thread writes between the same two barriers sees the write in only one of them.
// What it cannot check: timing, the memory model between blocks (blocks run one after
// another), a race whose outcome is the same in both orders or that needs threads to
// interleave mid-turn, and anything of the hardware's own arithmetic (fmaf and exp are the C
// library's).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

// ---- the runtime's types ------------------------------------------------------------------
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureUnmatched = 903,
};
using cudaError = cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
struct CUstream_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUevent_st;
using cudaStream_t = CUstream_st*;
using cudaGraph_t = CUgraph_st*;
using cudaGraphExec_t = CUgraphExec_st*;
using cudaEvent_t = CUevent_st*;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major, minor, multiProcessorCount, maxThreadsPerBlock, warpSize;
  size_t sharedMemPerBlock;
};
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum libraryPropertyType { MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2 };
enum cudaDataType { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_8I = 3, CUDA_R_32I = 10, CUDA_R_16BF = 14 };
using cudaDataType_t = cudaDataType;

const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* n);
cudaError_t cudaGetDevice(int* dev);
cudaError_t cudaSetDevice(int dev);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int dev);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev);
// A kernel's attribute; the emulated device's opt-in limit for dynamic shared memory is an
// H100's or H200's, 227 KiB (a kernel gets 48 KiB without opting in).
cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value);
template <class... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
cudaError_t cudaMalloc(void** p, size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s = nullptr);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t s = nullptr);
cudaError_t cudaMemset(void* p, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s = nullptr);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// ---- the device's side ------------------------------------------------------------------
namespace cuda_emu {

// The running kernel thread as the kernels see it (runtime.cpp keeps the rest).
struct Lane {
  uint3 idx;
  int lane, warp, parity;  // parity: which of the warp's two rows of shuffle slots is next
};
extern thread_local Lane* t_lane;
extern thread_local unsigned char* t_slots;  // the block's shuffle slots: (warp, parity, lane) x 16 bytes
extern thread_local uint3 t_block_idx;
extern thread_local dim3 t_block_dim, t_grid_dim;
inline const uint3& thread_idx() { return t_lane->idx; }
void sync_block();
void wait_warp();  // until every lane of the warp has left its value
[[noreturn]] void partial_mask();
void* dynamic_shared_memory();

template <class T>
T shfl_xor(unsigned mask, T v, int lane_mask) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16, "a register value");
  if (mask != 0xffffffffu) partial_mask();
  Lane& l = *t_lane;
  unsigned char* row = t_slots + ((size_t)l.warp * 2 + (size_t)l.parity) * 32 * 16;
  std::memcpy(row + (size_t)l.lane * 16, &v, sizeof(T));
  wait_warp();
  T out;
  std::memcpy(&out, row + (size_t)((l.lane ^ lane_mask) & 31) * 16, sizeof(T));
  l.parity ^= 1;
  return out;
}

// The runtime's side, for the emulated libraries (cublas.cpp): work on a stream runs now with
// device memory open, or is recorded in the thread's capture.
void submit_work(cudaStream_t s, std::function<void()> work);

// A launch's configuration (<<<grid, block, shared bytes, stream>>>).
struct Config {
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
  Config(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = nullptr) : grid(g), block(b), shared(s), stream(st) {}
};

// Whether p lies in memory cudaMalloc gave (or is null).
bool device_pointer(const void* p);
// Runs body's grid now, or records it in the thread's capture. A bad configuration or a host
// pointer argument sets the launch error instead (checked_args false).
void submit_kernel(const char* name, const void* kernel, const Config& c, bool checked_args,
                   std::function<void()> body);
void run_grid(const char* name, const Config& c, const std::function<void()>& thread_body);

template <class P>
bool arg_ok(const P& p) {
  if constexpr (std::is_pointer<P>::value) return device_pointer((const void*)p);
  return true;
}

template <class... P>
struct Launcher {
  void (*kernel)(P...);
  const char* name;
  Config config;
  template <class... A>
  void operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "a kernel's arguments");
    std::tuple<std::decay_t<P>...> args(static_cast<std::decay_t<P>>(std::forward<A>(a))...);
    const bool ok = std::apply([](const auto&... x) { return (true && ... && arg_ok(x)); }, args);
    auto k = kernel;
    const char* n = name;
    Config c = config;
    submit_kernel(name, reinterpret_cast<const void*>(kernel), config, ok,
                  [k, n, c, args]() { run_grid(n, c, [&] { std::apply(k, args); }); });
  }
};
template <class... P>
Launcher<P...> launch(void (*kernel)(P...), const char* name, Config c) {
  return {kernel, name, c};
}

}  // namespace cuda_emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// (a register budget for nvcc; the launches' block sizes are checked against 1,024 threads)
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define threadIdx (::cuda_emu::thread_idx())
#define blockIdx (::cuda_emu::t_block_idx)
#define blockDim (::cuda_emu::t_block_dim)
#define gridDim (::cuda_emu::t_grid_dim)
#define __syncthreads() ::cuda_emu::sync_block()
#define __shfl_xor_sync(mask, v, lane_mask) ::cuda_emu::shfl_xor((mask), (v), (lane_mask))

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

using std::isnan;
using std::max;
using std::min;
