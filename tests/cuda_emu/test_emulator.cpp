// The emulated CUDA device's own checks (tests/cuda_emu): kernels' threads, warps and blocks
// as a GPU runs them, and what it refuses the way a GPU would (or, where a GPU would fail
// silently or later, at once). Built into attnlite_tests only with ATTNLITE_CUDA_EMULATOR.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_emu.h"
#include "../fixture.h"

namespace {

// out[b] = the sum of in's row b (n values), by the usual warp-then-block reduction.
__global__ void block_sum(float* out, const float* in, int n) {
  __shared__ float red[32];
  float v = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += in[(long)blockIdx.x * n + i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x >= 32) return;  // whole warps leave: the first one's shuffles see 32 lanes
  v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// Every thread's (x, y, z) index and block's, flattened.
__global__ void indices(int* out) {
  const int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const int per = blockDim.x * blockDim.y * blockDim.z;
  out[b * per + t] = b * 1000 + t;
}

__global__ void exit_then_barrier(float* out) {
  if (threadIdx.x >= 64) return;
  __syncthreads();
  out[threadIdx.x] = 1.f;
}

__global__ void half_warp_shuffle(float* out) {
  float v = (float)threadIdx.x;
  if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

__global__ void read_shared(float* out, int n) {
  const float* sm = static_cast<const float*>(::cuda_emu::dynamic_shared_memory());
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = sm[i];
}

__global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.f;
}

// The order of a block's turns: each thread appends its index to order[1..] (order[0] counts),
// before and after a barrier. On a GPU that is a race; the emulated device runs one thread of
// the block at a time.
__global__ void turns(int* order) {
  for (int round = 0; round < 2; ++round) {
    const int k = order[0];
    order[0] = k + 1;
    order[1 + k] = (int)threadIdx.x;
    __syncthreads();
  }
}

// x[i] = old x[i + 1] for i < n - 1, one block: every thread's read must come before its
// neighbour's write, which takes a barrier between them (with_barrier); without it the result
// depends on the order of the threads' turns.
__global__ void shift_left(float* x, int n, bool with_barrier) {
  const int i = (int)threadIdx.x;
  const float v = i + 1 < n ? x[i + 1] : 0.f;
  if (with_barrier) __syncthreads();
  if (i + 1 < n) x[i] = v;
}

using cuda_emu::Config;
using cuda_emu::launch;

template <class T>
T* dev_alloc(size_t n) {
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess);
  return static_cast<T*>(p);
}

// How f ends in a child process: the signal that ended it (0: it returned), and its stderr.
struct Ending {
  int signal = 0;
  std::string err;
};
Ending in_child(const std::function<void()>& f) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // the signal's default action (not the test framework's handler), stdout muted
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGABRT, SIG_DFL);
    close(fds[0]);
    dup2(fds[1], 2);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1);
    f();
    _exit(0);
  }
  close(fds[1]);
  Ending e;
  char buf[512];
  for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) > 0;) e.err.append(buf, (size_t)k);
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

}  // namespace

TEST_CASE("emulated CUDA device: threads, warps and blocks as on a GPU", "[cuda][emulator]") {
  // a block reduction over 4 rows of 1,000 values (integers: the sum is exact)
  const int rows = 4, n = 1000;
  std::vector<float> in((size_t)rows * n);
  for (size_t i = 0; i < in.size(); ++i) in[i] = (float)(i % 97);
  float* din = dev_alloc<float>(in.size());
  float* dout = dev_alloc<float>(rows);
  REQUIRE(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  for (const int threads : {32, 128, 256, 1024}) {
    INFO(threads << " threads a block");
    launch(block_sum, "block_sum", Config(rows, threads))(dout, din, n);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    float out[rows];
    REQUIRE(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int r = 0; r < rows; ++r) {
      double want = 0;
      for (int i = 0; i < n; ++i) want += in[(size_t)r * n + i];
      CHECK(out[r] == (float)want);
    }
  }
  // three-dimensional grids and blocks: every (block, thread) once
  const dim3 grid(3, 2, 2), block(4, 8, 2);
  const int total = 12 * 64;
  int* didx = dev_alloc<int>(total);
  REQUIRE(cudaMemset(didx, 0xff, total * sizeof(int)) == cudaSuccess);
  launch(indices, "indices", Config(grid, block))(didx);
  std::vector<int> idx(total);
  REQUIRE(cudaMemcpy(idx.data(), didx, total * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (int b = 0; b < 12; ++b)
    for (int t = 0; t < 64; ++t) REQUIRE(idx[(size_t)b * 64 + t] == b * 1000 + t);
  // dynamic shared memory starts as NaN, not as zeros a kernel could come to rely on
  float* dsm = dev_alloc<float>(64);
  launch(read_shared, "read_shared", Config(1, 32, 64 * sizeof(float)))(dsm, 64);
  std::vector<float> sm(64);
  REQUIRE(cudaMemcpy(sm.data(), dsm, 64 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (float v : sm) CHECK(std::isnan(v));
  for (void* p : {(void*)din, (void*)dout, (void*)didx, (void*)dsm}) CHECK(cudaFree(p) == cudaSuccess);
}

// ATTNLITE_CUDA_EMU_ORDER: a block's threads take their turns in index order or in reverse, so
// that a kernel missing a barrier between a read and another thread's write of the same value
// gives a wrong result in one of the two orders (the cuda stage runs the kernel tests in both).
TEST_CASE("emulated CUDA device: the threads' turns in index order or in reverse", "[cuda][emulator]") {
  attnlite::test::ScopedEnv env("ATTNLITE_CUDA_EMU_ORDER");
  const int n = 64;
  int* dorder = dev_alloc<int>(1 + 2 * n);
  float* dx = dev_alloc<float>(n);
  std::vector<float> x(n), shifted(n);
  for (int i = 0; i < n; ++i) x[(size_t)i] = (float)(i * i % 17);
  for (int i = 0; i < n; ++i) shifted[(size_t)i] = i + 1 < n ? x[(size_t)i + 1] : x[(size_t)i];
  for (const std::string order : {"", "index", "reverse"}) {
    INFO("ATTNLITE_CUDA_EMU_ORDER '" << order << "'");
    env.set(order);
    const bool reverse = order == "reverse";
    REQUIRE(cudaMemset(dorder, 0, (1 + 2 * n) * sizeof(int)) == cudaSuccess);
    launch(turns, "turns", Config(1, n))(dorder);
    std::vector<int> got(1 + 2 * n);
    REQUIRE(cudaMemcpy(got.data(), dorder, got.size() * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(got[0] == 2 * n);
    for (int k = 0; k < 2 * n; ++k) REQUIRE(got[1 + (size_t)k] == (reverse ? n - 1 - k % n : k % n));
    for (const bool barrier : {true, false}) {
      INFO((barrier ? "with" : "without") << " the barrier");
      REQUIRE(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
      launch(shift_left, "shift_left", Config(1, n))(dx, n, barrier);
      std::vector<float> y(n);
      REQUIRE(cudaMemcpy(y.data(), dx, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
      // in reverse, thread i reads x[i + 1] after thread i + 1 wrote it
      REQUIRE((y == shifted) == (barrier || !reverse));
    }
  }
  // any other value stops the run, saying which are known
  const Ending bad = in_child([&] {
    setenv("ATTNLITE_CUDA_EMU_ORDER", "random", 1);
    launch(turns, "turns", Config(1, n))(dorder);
  });
  CHECK(bad.signal == SIGABRT);
  CHECK_THAT(bad.err, Catch::Contains("ATTNLITE_CUDA_EMU_ORDER is 'random': it may be 'index' or 'reverse'"));
  CHECK(cudaFree(dorder) == cudaSuccess);
  CHECK(cudaFree(dx) == cudaSuccess);
}

TEST_CASE("emulated CUDA device: refuses what a GPU refuses", "[cuda][emulator]") {
  float* d = dev_alloc<float>(256);
  REQUIRE(cudaMemset(d, 0, 256 * sizeof(float)) == cudaSuccess);
  std::vector<float> host(256, 5.f);
  // launch limits: the launch error, cleared by reading it; nothing ran
  launch(add_one, "add_one", Config(1, 1025))(d, 256);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);
  launch(add_one, "add_one", Config(1, 256, 48 * 1024 + 4))(d, 256);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  // past 48 KiB once the kernel opts in, up to the device's opt-in limit (an H200's 227 KiB)
  int optin = 0;
  REQUIRE(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) == cudaSuccess);
  CHECK(optin == 227 * 1024);
  CHECK(cudaFuncSetAttribute(add_one, cudaFuncAttributeMaxDynamicSharedMemorySize, optin + 1) ==
        cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaErrorInvalidValue);
  REQUIRE(cudaFuncSetAttribute(add_one, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
  launch(add_one, "add_one", Config(1, 256, 64 * 1024))(d, 256);
  CHECK(cudaGetLastError() == cudaSuccess);
  launch(add_one, "add_one", Config(1, 256, 64 * 1024 + 4))(d, 256);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  REQUIRE(cudaFuncSetAttribute(add_one, cudaFuncAttributeMaxDynamicSharedMemorySize, 0) == cudaSuccess);
  launch(add_one, "add_one", Config(1, 256, 48 * 1024 + 4))(d, 256);  // 48 KiB again
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  REQUIRE(cudaMemset(d, 0, 256 * sizeof(float)) == cudaSuccess);  // the run above added one
  launch(add_one, "add_one", Config(dim3(1, 65536), 32))(d, 256);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  // a host pointer given to a kernel: refused, the host array untouched
  launch(add_one, "add_one", Config(1, 256))(host.data(), 256);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevicePointer);
  CHECK(host[0] == 5.f);
  // copies whose ends are not where their kind says
  CHECK(cudaMemcpy(d, host.data(), 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(host.data(), d, 16, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
  CHECK(cudaMemcpy(d, d + 8, 2048, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);  // past the end
  (void)cudaGetLastError();
  std::vector<float> back(256, -1.f);
  REQUIRE(cudaMemcpy(back.data(), d, 256 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (float v : back) REQUIRE(v == 0.f);

  // Device memory is not the host's: a host read faults, before and after a kernel ran on it.
  const Ending before = in_child([&] { std::printf("%f", (double)*(volatile float*)d); });
  CHECK(before.signal == SIGSEGV);
  launch(add_one, "add_one", Config(1, 256))(d, 256);
  const Ending after = in_child([&] { std::printf("%f", (double)*(volatile float*)d); });
  CHECK(after.signal == SIGSEGV);
  // and a kernel's access past the end of an allocation faults (a guard page follows each)
  const Ending past = in_child([&] { launch(add_one, "add_one", Config(2, 256))(d, 257); });
  CHECK(past.signal == SIGSEGV);

  // A barrier not every thread reaches, a full-mask shuffle not every lane reaches: the
  // launch stops, naming the kernel and the block.
  const Ending barrier = in_child([&] { launch(exit_then_barrier, "exit_then_barrier", Config(2, 128))(d); });
  CHECK(barrier.signal == SIGABRT);
  CHECK_THAT(barrier.err, Catch::Contains("exit_then_barrier (block 0,0,0): __syncthreads() reached by 64 of 128 threads (64 exited)"));
  const Ending shuffle = in_child([&] { launch(half_warp_shuffle, "half_warp_shuffle", Config(1, 64))(d); });
  CHECK(shuffle.signal == SIGABRT);
  CHECK_THAT(shuffle.err, Catch::Contains("half_warp_shuffle (block 0,0,0): a full-mask warp shuffle reached by 16 of warp 0's 32 lanes"));
  CHECK(cudaFree(d) == cudaSuccess);
  CHECK(cudaFree(host.data()) == cudaErrorInvalidDevicePointer);
  (void)cudaGetLastError();
}

TEST_CASE("emulated CUDA device: stream capture records, graphs replay", "[cuda][emulator]") {
  const int n = 300;
  float* d = dev_alloc<float>(n);
  REQUIRE(cudaMemset(d, 0, n * sizeof(float)) == cudaSuccess);
  const cudaStream_t s = cudaStreamPerThread;
  // captured work does not run; the graph runs it, in order, each time it is launched
  REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(s, &st) == cudaSuccess);
  CHECK(st == cudaStreamCaptureStatusActive);
  launch(add_one, "add_one", Config(2, 256, 0, s))(d, n);
  REQUIRE(cudaMemsetAsync(d, 0, sizeof(float), s) == cudaSuccess);  // d[0] = 0 after the add
  launch(add_one, "add_one", Config(2, 256, 0, s))(d, n);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(s, &graph) == cudaSuccess);
  REQUIRE(graph != nullptr);
  std::vector<float> h(n, -1.f);
  REQUIRE(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
  for (float v : h) REQUIRE(v == 0.f);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  for (int rep = 1; rep <= 2; ++rep) {
    REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    REQUIRE(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(h[0] == 1.f);
    CHECK(h[1] == 2.f * rep);
    CHECK(h[n - 1] == 2.f * rep);
  }
  CHECK(cudaGraphExecDestroy(exec) == cudaSuccess);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  // an allocation, a synchronous copy or a wait inside a capture: refused, and the capture
  // gives no graph
  for (int k = 0; k < 3; ++k) {
    INFO("refused call " << k);
    REQUIRE(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    void* p = nullptr;
    const cudaError_t e = k == 0 ? cudaMalloc(&p, 64)
                          : k == 1 ? cudaMemcpy(h.data(), d, 4, cudaMemcpyDeviceToHost)
                                   : cudaStreamSynchronize(s);
    CHECK(e == cudaErrorStreamCaptureUnsupported);
    CHECK(p == nullptr);
    REQUIRE(cudaStreamIsCapturing(s, &st) == cudaSuccess);
    CHECK(st == cudaStreamCaptureStatusInvalidated);
    graph = reinterpret_cast<cudaGraph_t>(&st);
    CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated);
    CHECK(graph == nullptr);
    (void)cudaGetLastError();
  }
  CHECK(cudaFree(d) == cudaSuccess);
}
