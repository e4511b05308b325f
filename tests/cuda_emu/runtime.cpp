// The emulated device (cuda_emu.h): memory, streams and capture, graphs, events, and the
// kernel threads as fibers.
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_emu.h"

namespace cuda_emu {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "emulated CUDA device: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// ---- device memory: mapped without access, opened while the device works -----------------
namespace {

// An allocation: `bytes` at the end of its pages (256-byte aligned, as cudaMalloc's are), then
// a guard page that never opens, so that a kernel reading or writing past the end faults.
struct Region {
  char* map;         // the first page
  size_t pages;      // bytes of the pages that open (the guard page follows)
  size_t bytes;      // asked for
};
struct Memory {
  std::mutex mu;
  std::map<uintptr_t, Region> regions;  // by the pointer cudaMalloc gave
  int open = 0;                         // device work in progress (all threads)
};
Memory& memory() {
  static Memory* m = new Memory;  // outlives every static that frees device memory
  return *m;
}
size_t page_size() {
  static const size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

void protect_all(Memory& m, int prot) {
  for (const auto& r : m.regions)
    if (mprotect(r.second.map, r.second.pages, prot) != 0) fail("mprotect failed");
}

}  // namespace

// While one lives, device memory is readable and writable (the device is at work).
struct DeviceWork {
  DeviceWork() {
    Memory& m = memory();
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.open++ == 0) protect_all(m, PROT_READ | PROT_WRITE);
  }
  ~DeviceWork() {
    Memory& m = memory();
    std::lock_guard<std::mutex> lock(m.mu);
    if (--m.open == 0) protect_all(m, PROT_NONE);
  }
  DeviceWork(const DeviceWork&) = delete;
  DeviceWork& operator=(const DeviceWork&) = delete;
};

// The region holding [p, p + bytes), or false.
static bool in_device(const void* p, size_t bytes) {
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mu);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = m.regions.upper_bound(a);
  if (it == m.regions.begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second.bytes;
}

bool device_pointer(const void* p) { return !p || in_device(p, 0); }

// ---- errors, capture --------------------------------------------------------------------
namespace {

thread_local cudaError_t t_error = cudaSuccess;  // the launch error cudaGetLastError returns

cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) t_error = e;
  return e;
}

// The calling thread's capture: the work it records instead of running.
struct Capture {
  bool active = false, invalid = false;
  cudaStream_t stream = nullptr;
  std::vector<std::function<void()>> work;
};
thread_local Capture t_capture;

bool capturing(cudaStream_t s) {
  (void)s;  // every stream of the thread: the backend uses only its per-thread stream
  return t_capture.active;
}

// A call that may not run inside a capture: invalidates it.
cudaError_t refuse_in_capture() {
  if (!t_capture.active) return cudaSuccess;
  t_capture.invalid = true;
  return set_error(cudaErrorStreamCaptureUnsupported);
}

void submit(cudaStream_t s, std::function<void()> work) {
  if (capturing(s)) {
    t_capture.work.push_back(std::move(work));
    return;
  }
  DeviceWork open;
  work();
}

}  // namespace

void submit_work(cudaStream_t s, std::function<void()> work) { submit(s, std::move(work)); }

// ---- kernel threads ----------------------------------------------------------------------
// Switching between the scheduler and a kernel thread. On x86-64 a switch saves the
// callee-saved registers on the old stack and its stack pointer, then restores the new one's
// (a kernel thread's first switch "returns" into thread_main); elsewhere ucontext's
// swapcontext does it, with a system call per switch.
struct Context {
#if defined(__x86_64__)
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
};

#if defined(__x86_64__)
extern "C" void cuda_emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl cuda_emu_switch
  .type cuda_emu_switch, @function
cuda_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_emu_switch, .-cuda_emu_switch
)");
void switch_to(Context& from, Context& to) { cuda_emu_switch(&from.sp, to.sp); }
// A context that starts entry() on the stack [lo, lo + bytes).
void start_context(Context& c, char* lo, size_t bytes, void (*entry)()) {
  uintptr_t top = ((uintptr_t)(lo + bytes)) & ~(uintptr_t)15;
  void** sp = reinterpret_cast<void**>(top - 64);  // six registers, entry, a return slot
  for (int i = 0; i < 6; ++i) sp[i] = nullptr;
  sp[6] = reinterpret_cast<void*>(entry);
  sp[7] = nullptr;  // entry never returns
  c.sp = sp;
}
#else
void switch_to(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
void start_context(Context& c, char* lo, size_t bytes, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = lo;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
#endif

enum class State { Ready, AtWarp, AtBlock, Done };

struct Thread {
  Lane lane;  // first: t_lane points here
  Context context;
  State state = State::Ready;
};

thread_local Lane* t_lane = nullptr;
thread_local unsigned char* t_slots = nullptr;
thread_local uint3 t_block_idx{0, 0, 0};
thread_local dim3 t_block_dim, t_grid_dim;

namespace {

constexpr size_t kStackBytes = 64 * 1024;
// Each stack's top is moved down by a different multiple of a cache line (thread i: i mod 64
// lines), so that the threads' frames do not all fall in the same cache sets.
constexpr size_t kStackColours = 64, kLine = 64;
constexpr int kMaxThreads = 1024, kMaxWarps = kMaxThreads / 32;
constexpr size_t kMaxDynamicShared = 48 * 1024;        // without opting in
constexpr int kMaxDynamicSharedOptin = 227 * 1024;     // an H100's or H200's opt-in limit

// A block's run: its threads, their stacks, the warps' shuffle slots. The threads run in
// rounds: each Ready thread in turn until it waits (at a shuffle or __syncthreads) or ends,
// switching straight to the next Ready one; the last switches back to the scheduler, which
// releases the warps whose 32 lanes all wait at a shuffle, else the block when every thread
// waits at __syncthreads, and starts the next round. The turn is the threads' index order, or
// its reverse (reverse_order()): a read of what another thread of the block writes between
// the same two barriers sees the write in one of the two orders and not in the other, so a
// kernel that needs a barrier there gives other results in one of them.
struct Block {
  std::vector<Thread> threads;
  std::vector<unsigned char> slots;  // (warp, parity, lane) x 16 bytes
  char* stacks = nullptr;            // kMaxThreads stacks, each above a guard page
  size_t stack_span = 0;
  Context scheduler;
  const std::function<void()>* body = nullptr;
  const char* kernel = "";
  std::vector<unsigned char> shared;  // dynamic shared memory
  int n = 0, cursor = 0;              // threads; the turn of the one running
  bool reverse = false;               // the turn runs from the last thread to the first
  int at(int turn) const { return reverse ? n - 1 - turn : turn; }  // the thread of a turn
  int at_warp[kMaxWarps] = {}, at_block = 0, done = 0;
  Block() {
    stack_span = kStackBytes + page_size();
    void* p = mmap(nullptr, stack_span * kMaxThreads, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("cannot map the kernel threads' stacks");
    stacks = static_cast<char*>(p);
    for (int i = 0; i < kMaxThreads; ++i) mprotect(stacks + i * stack_span, page_size(), PROT_NONE);
    threads.resize(kMaxThreads);
    slots.resize((size_t)kMaxWarps * 2 * 32 * 16);
  }
  ~Block() { munmap(stacks, stack_span * kMaxThreads); }
};
thread_local Block* t_block = nullptr;

Block& block_state() {
  thread_local std::unique_ptr<Block> b;
  if (!b) b = std::make_unique<Block>();
  return *b;
}

// ATTNLITE_CUDA_EMU_ORDER in the environment, read at each launch: unset or "index", a block's
// threads take their turns in index order; "reverse", from the last to the first.
bool reverse_order() {
  const char* e = std::getenv("ATTNLITE_CUDA_EMU_ORDER");
  if (!e || !*e || std::strcmp(e, "index") == 0) return false;
  if (std::strcmp(e, "reverse") == 0) return true;
  fail(std::string("ATTNLITE_CUDA_EMU_ORDER is '") + e + "': it may be 'index' or 'reverse'");
}

// From the running thread, which has just set its state: on to the next Ready thread of the
// round, or back to the scheduler.
void yield() {
  Block& b = *t_block;
  Thread& me = b.threads[b.at(b.cursor)];
  for (int k = b.cursor + 1; k < b.n; ++k)
    if (b.threads[b.at(k)].state == State::Ready) {
      b.cursor = k;
      t_lane = &b.threads[b.at(k)].lane;
      switch_to(me.context, b.threads[b.at(k)].context);
      return;
    }
  b.cursor = b.n;
  t_lane = nullptr;
  switch_to(me.context, b.scheduler);
}

void thread_main() {
  Block& b = *t_block;
  (*b.body)();
  b.threads[b.at(b.cursor)].state = State::Done;
  ++b.done;
  yield();
  fail("a finished kernel thread was resumed");
}

std::string where(const Block& b) {
  return std::string(b.kernel) + " (block " + std::to_string(t_block_idx.x) + "," +
         std::to_string(t_block_idx.y) + "," + std::to_string(t_block_idx.z) + ")";
}

void run_block(Block& b, int n) {
  const int warps = (n + 31) / 32;
  b.n = n;
  b.at_block = b.done = 0;
  for (int w = 0; w < warps; ++w) b.at_warp[w] = 0;
  for (int i = 0; i < n; ++i) {
    Thread& t = b.threads[i];
    t.lane.idx = {(unsigned)i % t_block_dim.x, (unsigned)(i / t_block_dim.x) % t_block_dim.y,
                  (unsigned)(i / (t_block_dim.x * t_block_dim.y))};
    t.lane.lane = i % 32;
    t.lane.warp = i / 32;
    t.lane.parity = 0;
    t.state = State::Ready;
    start_context(t.context, b.stacks + (size_t)i * b.stack_span + page_size(),
                  kStackBytes - (size_t)(i % kStackColours) * kLine, thread_main);
  }
  if (!b.shared.empty()) std::fill(b.shared.begin(), b.shared.end(), (unsigned char)0xff);
  for (;;) {
    int first = 0;
    while (first < n && b.threads[b.at(first)].state != State::Ready) ++first;
    if (first < n) {
      b.cursor = first;
      t_lane = &b.threads[b.at(first)].lane;
      switch_to(b.scheduler, b.threads[b.at(first)].context);
    }
    // every thread now waits or has ended
    bool released = false;
    for (int w = 0; w < warps; ++w) {
      if (b.at_warp[w] == 0) continue;
      const int lo = w * 32, hi = std::min(n, lo + 32);
      if (hi - lo < 32)
        fail(where(b) + ": a full-mask warp shuffle in a warp of " + std::to_string(hi - lo) + " threads");
      if (b.at_warp[w] != 32)
        fail(where(b) + ": a full-mask warp shuffle reached by " + std::to_string(b.at_warp[w]) +
             " of warp " + std::to_string(w) + "'s 32 lanes (the others exited or wait at __syncthreads)");
      for (int i = lo; i < hi; ++i) b.threads[i].state = State::Ready;
      b.at_warp[w] = 0;
      released = true;
    }
    if (released) continue;
    if (b.done == n) return;
    if (b.done > 0)
      fail(where(b) + ": __syncthreads() reached by " + std::to_string(b.at_block) + " of " +
           std::to_string(n) + " threads (" + std::to_string(b.done) + " exited)");
    for (int i = 0; i < n; ++i) b.threads[i].state = State::Ready;
    b.at_block = 0;
  }
}

}  // namespace

void sync_block() {
  if (!t_lane) fail("__syncthreads() outside a kernel");
  Block& b = *t_block;
  b.threads[b.at(b.cursor)].state = State::AtBlock;
  ++b.at_block;
  yield();
}

void wait_warp() {
  if (!t_lane) fail("a warp shuffle outside a kernel");
  Block& b = *t_block;
  b.threads[b.at(b.cursor)].state = State::AtWarp;
  ++b.at_warp[t_lane->warp];
  yield();
}

void partial_mask() { fail(where(*t_block) + ": a warp shuffle with a partial mask (not emulated)"); }

void* dynamic_shared_memory() {
  if (!t_block || t_block->shared.empty()) fail("dynamic shared memory in a launch without any");
  return t_block->shared.data();
}

// Each kernel's cudaFuncAttributeMaxDynamicSharedMemorySize, where it opted in past 48 KiB.
static std::mutex g_attr_mutex;
static std::map<const void*, size_t>& shared_optin() {
  static std::map<const void*, size_t> m;
  return m;
}
static size_t max_dynamic_shared(const void* kernel) {
  std::lock_guard<std::mutex> lock(g_attr_mutex);
  auto it = shared_optin().find(kernel);
  return it == shared_optin().end() ? kMaxDynamicShared : it->second;
}

void submit_kernel(const char* name, const void* kernel, const Config& c, bool checked_args,
                   std::function<void()> body) {
  const unsigned long long threads = (unsigned long long)c.block.x * c.block.y * c.block.z;
  if (threads == 0 || threads > (unsigned long long)kMaxThreads || c.block.z > 64 || c.grid.x == 0 ||
      c.grid.y == 0 || c.grid.z == 0 || c.grid.x > 0x7fffffffu || c.grid.y > 65535 || c.grid.z > 65535 ||
      c.shared > max_dynamic_shared(kernel)) {
    set_error(cudaErrorInvalidConfiguration);
    return;
  }
  if (!checked_args) {
    std::fprintf(stderr, "emulated CUDA device: %s got a pointer that is not device memory\n", name);
    set_error(cudaErrorInvalidDevicePointer);
    return;
  }
  submit(c.stream, std::move(body));
}

void run_grid(const char* name, const Config& c, const std::function<void()>& thread_body) {
  Block& b = block_state();
  Block* outer = t_block;
  if (outer) fail(std::string("a launch from inside kernel ") + outer->kernel);
  t_block = &b;
  t_slots = b.slots.data();
  b.body = &thread_body;
  b.kernel = name;
  b.reverse = reverse_order();
  b.shared.assign(c.shared, 0);
  t_block_dim = c.block;
  t_grid_dim = c.grid;
  const int n = (int)(c.block.x * c.block.y * c.block.z);
  for (unsigned z = 0; z < c.grid.z; ++z)
    for (unsigned y = 0; y < c.grid.y; ++y)
      for (unsigned x = 0; x < c.grid.x; ++x) {
        t_block_idx = {x, y, z};
        run_block(b, n);
      }
  t_block = nullptr;
}

}  // namespace cuda_emu

// ---- the runtime API ---------------------------------------------------------------------
using cuda_emu::fail;

namespace {
cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess) cuda_emu::set_error(e);
  return e;
}
}  // namespace

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnmatched: return "the capture was not initiated in this stream";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = cuda_emu::t_error;
  cuda_emu::t_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return cuda_emu::t_error; }
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* dev) {
  *dev = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int dev) { return dev == 0 ? cudaSuccess : ret(cudaErrorInvalidValue); }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int dev) {
  if (dev != 0) return ret(cudaErrorInvalidValue);
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "emulated CUDA device (CPU)");
  p->totalGlobalMem = (size_t)1 << 32;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  p->maxThreadsPerBlock = 1024;
  p->warpSize = 32;
  p->sharedMemPerBlock = 48 * 1024;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int dev) {
  if (!value || dev != 0 || attr != cudaDevAttrMaxSharedMemoryPerBlockOptin) return ret(cudaErrorInvalidValue);
  *value = cuda_emu::kMaxDynamicSharedOptin;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* kernel, cudaFuncAttribute attr, int value) {
  if (!kernel || attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      value > cuda_emu::kMaxDynamicSharedOptin)
    return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(cuda_emu::g_attr_mutex);
  cuda_emu::shared_optin()[kernel] = std::max((size_t)value, cuda_emu::kMaxDynamicShared);
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** out, size_t bytes) {
  *out = nullptr;
  if (cuda_emu::refuse_in_capture() != cudaSuccess) return cudaErrorStreamCaptureUnsupported;
  if (bytes == 0) return cudaSuccess;
  if (bytes > ((size_t)1 << 36)) return ret(cudaErrorMemoryAllocation);
  const size_t page = cuda_emu::page_size(), span = (bytes + 255) / 256 * 256;
  const size_t pages = (span + page - 1) / page * page;
  auto& m = cuda_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  void* p = mmap(nullptr, pages + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return ret(cudaErrorMemoryAllocation);
  char* map = static_cast<char*>(p);
  if (m.open && mprotect(map, pages, PROT_READ | PROT_WRITE) != 0) fail("mprotect failed");
  char* user = map + pages - span;
  m.regions[reinterpret_cast<uintptr_t>(user)] = {map, pages, bytes};
  *out = user;
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  auto& m = cuda_emu::memory();
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.regions.find(reinterpret_cast<uintptr_t>(p));
  if (it == m.regions.end()) return ret(cudaErrorInvalidDevicePointer);
  munmap(it->second.map, it->second.pages + cuda_emu::page_size());
  m.regions.erase(it);
  return cudaSuccess;
}

namespace {

// Whether a copy's ends lie where its kind says: [dst, dst + dbytes) and [src, src + sbytes)
// wholly in device memory for a device side, not in it for a host side.
cudaError_t check_copy(void* dst, size_t dbytes, const void* src, size_t sbytes, cudaMemcpyKind kind) {
  bool dd = false, sd = false;
  switch (kind) {
    case cudaMemcpyHostToHost: break;
    case cudaMemcpyHostToDevice: dd = true; break;
    case cudaMemcpyDeviceToHost: sd = true; break;
    case cudaMemcpyDeviceToDevice: dd = sd = true; break;
    default: return cudaErrorInvalidMemcpyDirection;  // the backend always says which way
  }
  const auto side_ok = [](const void* p, size_t n, bool device) {
    return device ? cuda_emu::in_device(p, n) : !cuda_emu::in_device(p, 0);
  };
  if (!side_ok(dst, dbytes, dd) || !side_ok(src, sbytes, sd)) {
    std::fprintf(stderr, "emulated CUDA device: a copy (kind %d) whose ends are not where its kind says\n",
                 (int)kind);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s) {
  if (!bytes) return cudaSuccess;
  if (const cudaError_t e = check_copy(dst, bytes, src, bytes, kind)) return ret(e);
  cuda_emu::submit_work(s, [=] { std::memmove(dst, src, bytes); });
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t s) {
  if (!width || !height) return cudaSuccess;
  if (width > dpitch || width > spitch) return ret(cudaErrorInvalidValue);
  const size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
  if (const cudaError_t e = check_copy(dst, dspan, src, sspan, kind)) return ret(e);
  cuda_emu::submit_work(s, [=] {
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  });
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
  if (!bytes) return cudaSuccess;
  if (!cuda_emu::in_device(p, bytes)) return ret(cudaErrorInvalidValue);
  cuda_emu::submit_work(s, [=] { std::memset(p, value, bytes); });
  return cudaSuccess;
}

// The synchronous calls: refused inside a capture; outside one, the asynchronous work runs
// as it is issued, which is all a synchronous call adds.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (cuda_emu::refuse_in_capture() != cudaSuccess) return cudaErrorStreamCaptureUnsupported;
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  if (cuda_emu::refuse_in_capture() != cudaSuccess) return cudaErrorStreamCaptureUnsupported;
  return cudaMemsetAsync(p, value, bytes, nullptr);
}

cudaError_t cudaDeviceSynchronize() { return cuda_emu::refuse_in_capture(); }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cuda_emu::refuse_in_capture(); }

// ---- capture and graphs ------------------------------------------------------------------
struct CUgraph_st {
  std::vector<std::function<void()>> work;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  auto& c = cuda_emu::t_capture;
  if (c.active) return ret(cudaErrorStreamCaptureUnsupported);
  c = cuda_emu::Capture{};
  c.active = true;
  c.stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  auto& c = cuda_emu::t_capture;
  *graph = nullptr;
  if (!c.active) return ret(cudaErrorInvalidValue);
  if (c.stream != s) return ret(cudaErrorStreamCaptureUnmatched);
  c.active = false;
  if (c.invalid) {
    c.work.clear();
    return ret(cudaErrorStreamCaptureInvalidated);
  }
  *graph = new CUgraph_st{std::move(c.work)};
  c.work.clear();
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus* status) {
  const auto& c = cuda_emu::t_capture;
  *status = !c.active ? cudaStreamCaptureStatusNone
                      : c.invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (!graph) return ret(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->work};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  if (!exec) return ret(cudaErrorInvalidValue);
  cuda_emu::submit_work(s, [exec] {
    for (auto& w : exec->work) w();
  });
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

// ---- events: host time when the work before them is done (all work runs as it is issued) --
struct CUevent_st {
  std::chrono::steady_clock::time_point at;
  bool recorded = false;
};
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e) return ret(cudaErrorInvalidResourceHandle);
  cuda_emu::submit_work(s, [e] {
    e->at = std::chrono::steady_clock::now();
    e->recorded = true;
  });
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (!e) return ret(cudaErrorInvalidResourceHandle);
  return cuda_emu::refuse_in_capture();
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a || !b) return ret(cudaErrorInvalidResourceHandle);
  if (!a->recorded || !b->recorded) return ret(cudaErrorNotReady);
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}
