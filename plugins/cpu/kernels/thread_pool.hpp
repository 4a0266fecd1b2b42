// The shared pool of worker threads and the loops that split work over it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "function_ref.hpp"

namespace tileops::cpu {

// The most threads TILEOPS_CPU_THREADS may ask for.
inline constexpr int kMaxThreads = 1024;

// The thread count TILEOPS_CPU_THREADS asks for, given its value (null when unset) and the
// hardware concurrency: an integer from 1 to kMaxThreads, written in decimal digits only.
// Anything else gives the hardware concurrency (at least 1) and a warning naming the variable,
// the value and what is accepted; a count above kMaxThreads gives kMaxThreads and a warning.
struct ThreadSetting {
  int threads = 1;
  std::string warning;  // empty when the value was used as given
};
ThreadSetting thread_setting(const char* value, unsigned hardware_concurrency);

// Where the pool's warnings go (a bad TILEOPS_CPU_THREADS, threads that could not be started).
// The default handler writes them to stderr; the plugin routes them to the tileops logger.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

struct Job;

// Worker threads that run the tasks of run() calls together with the calling thread.
class ThreadPool {
 public:
  // Starts one worker thread running `body`; throws (std::system_error from std::thread) when
  // the system cannot make one. Tests replace it to make thread creation fail.
  using StartWorker = std::function<std::thread(std::function<void()> body)>;

  // A pool of `threads` threads, the caller of run() included. When a worker cannot be started
  // (a process or memory limit), the pool keeps half of those it had started, down to none, in
  // which case every task runs on the calling thread, and warns with the counts and the reason.
  explicit ThreadPool(int threads, const StartWorker& start = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The threads that run a split call, the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for every i in [0, tasks) as run_tasks describes.
  void run(int64_t tasks, FunctionRef<void(int64_t)> task);

 private:
  // Starts workers until there are `count`; returns why it stopped short, or "".
  std::string start_workers(int count, const StartWorker& start);
  // Stops and joins every worker (none may be running a job).
  void stop_workers();
  void work();
  Job* first_open_job() const;

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Job*> jobs_;
  bool stop_ = false;
};

// Runs task(i) for every i in [0, tasks) on the pool's workers and the calling thread, and returns
// when all have finished. The first exception a task throws is rethrown here after the others ran.
// A call made from inside a task runs inline. Safe to call from many threads at once.
void run_tasks(int64_t tasks, FunctionRef<void(int64_t)> task);

// Splits [0, count) into contiguous ranges and runs body(begin, end) on each, in parallel when the
// whole loop moves at least a few hundred KiB (item_bytes per item); otherwise inline, so that
// small calls pay no thread wake-up.
void parallel_for(int64_t count, int64_t item_bytes, FunctionRef<void(int64_t, int64_t)> body);

// A column alignment for parallel_for_2d that keeps splits on cache-line boundaries of 16-bit
// elements (and so of wider ones).
inline constexpr int64_t kColumnAlign = 32;

// The same over a [rows, cols] grid of elements of elem_bytes each: body(r0, r1, c0, c1) gets a
// rectangle. Rows are split first; columns only when there are too few rows to keep every thread
// busy. `align` is a column count every split column offset is a multiple of.
void parallel_for_2d(int64_t rows, int64_t cols, int64_t elem_bytes, int64_t align,
                     FunctionRef<void(int64_t, int64_t, int64_t, int64_t)> body);

}  // namespace tileops::cpu
