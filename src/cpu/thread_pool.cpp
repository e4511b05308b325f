// A fixed pool of workers woken per parallel_for by a generation counter; work items are
// claimed with an atomic index, so a call moves no memory and allocates nothing.
//
// Several sessions on several threads may call parallel_for at once: the pool serves one
// call at a time (busy_), and a call that finds it busy runs its items itself on the calling
// thread, so nobody waits for another session's work. set_num_threads takes busy_ too: it
// waits for the call in flight, and calls made meanwhile run serially.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "attnlite/error.h"
#include "attnlite/threads.h"

namespace attnlite {

namespace {

class Pool {
 public:
  ~Pool() { resize(1); }

  void resize(int n) {
    std::lock_guard<std::mutex> busy(busy_);
    stop_workers();
    // Each worker starts from the current generation, read here and not in the new thread:
    // a parallel_for issued before the thread runs must still wake it.
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, g = generation_] { loop(g); });
    threads_.store(n, std::memory_order_relaxed);
  }
  int size() const { return threads_.load(std::memory_order_relaxed); }

  void run(int n, void (*fn)(void*, int), void* ctx) {
    // A parallel_for from inside an item on the calling thread (which holds busy_) is serial.
    std::unique_lock<std::mutex> busy;
    if (n > 1 && size() > 1 && !inside_) busy = std::unique_lock<std::mutex>(busy_, std::try_to_lock);
    if (!busy.owns_lock() || workers_.empty()) {
      for (int i = 0; i < n; ++i) fn(ctx, i);
      return;
    }
    inside_ = true;
    {
      std::lock_guard<std::mutex> lk(m_);
      fn_ = fn; ctx_ = ctx; n_ = n;
      next_.store(0);
      pending_ = (int)workers_.size();
      ++generation_;
    }
    cv_.notify_all();
    work();
    {
      std::unique_lock<std::mutex> lk(m_);
      done_cv_.wait(lk, [this] { return pending_ == 0; });
    }
    inside_ = false;
  }

 private:
  void work() {
    for (int i = next_.fetch_add(1); i < n_; i = next_.fetch_add(1)) fn_(ctx_, i);
  }
  void loop(unsigned long seen) {
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> lk(m_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
  void stop_workers() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
    stop_ = false;
  }

  std::mutex busy_;  // held by the one parallel_for the workers serve, and by resize
  static thread_local bool inside_;  // this thread is serving a parallel_for
  std::vector<std::thread> workers_;
  std::atomic<int> threads_{1};
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  bool stop_ = false;
  unsigned long generation_ = 0;
  int pending_ = 0;
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0};
};

thread_local bool Pool::inside_ = false;

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1 || n > 64) throw Error("threads must be in [1, 64], got " + std::to_string(n));
  if (n != pool().size()) pool().resize(n);
}

int num_threads() { return pool().size(); }

void parallel_for(int n, void (*fn)(void*, int), void* ctx) { pool().run(n, fn, ctx); }

}  // namespace attnlite
