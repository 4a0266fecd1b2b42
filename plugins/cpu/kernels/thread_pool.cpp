#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <system_error>

#include "cpu_kernels.hpp"
#include "tileops/checked.hpp"

namespace tileops::cpu {
namespace {

// Below this many bytes moved a loop runs inline: waking a worker costs more than it saves.
constexpr int64_t kMinParallelBytes = int64_t{256} << 10;
// The least a task should move, so that claiming it is cheap next to running it.
constexpr int64_t kMinTaskBytes = int64_t{64} << 10;
// Tasks per thread: more than one evens out threads that start late or are preempted.
constexpr int64_t kTasksPerThread = 4;

void warn_to_stderr(const std::string& message) { std::cerr << "[tileops cpu] [warning] " << message << "\n"; }

std::atomic<WarningHandler> g_warning_handler{warn_to_stderr};

thread_local bool t_inside_task = false;

std::thread start_thread(std::function<void()> body) { return std::thread(std::move(body)); }

}  // namespace

// One run_tasks call. It lives on the caller's stack; workers reach it only through the pool's
// job list and register as users under the pool mutex, so the caller can wait for them to leave.
struct Job {
  Job(FunctionRef<void(int64_t)> fn, int64_t count) : task(fn), tasks(count) {}

  FunctionRef<void(int64_t)> task;
  int64_t tasks;
  std::atomic<int64_t> next{0};
  int users = 0;
  std::condition_variable idle;
  std::mutex error_mutex;
  std::exception_ptr error;

  // Claims and runs tasks until none is left.
  void execute() {
    const bool was_inside = t_inside_task;
    t_inside_task = true;
    for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < tasks;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
    t_inside_task = was_inside;
  }

  bool open() const { return next.load(std::memory_order_relaxed) < tasks; }
};

ThreadSetting thread_setting(const char* value, unsigned hardware_concurrency) {
  const int hardware = static_cast<int>(std::clamp(hardware_concurrency, 1u, static_cast<unsigned>(kMaxThreads)));
  if (value == nullptr || *value == '\0') return {hardware, {}};
  const std::string text(value);
  long long n = 0;  // saturates just above kMaxThreads
  bool digits = true;
  for (char c : text) {
    digits = digits && c >= '0' && c <= '9';
    if (digits) n = std::min<long long>(n * 10 + (c - '0'), kMaxThreads + 1);
  }
  if (!digits || n < 1) {
    return {hardware, "TILEOPS_CPU_THREADS='" + text + "' is not a thread count: expected an integer from 1 to " +
                          std::to_string(kMaxThreads) + "; using the " + std::to_string(hardware) +
                          " hardware thread(s)"};
  }
  if (n > kMaxThreads) {
    return {kMaxThreads, "TILEOPS_CPU_THREADS=" + text + " is more than the " + std::to_string(kMaxThreads) +
                             " threads the cpu plugin runs; using " + std::to_string(kMaxThreads)};
  }
  return {static_cast<int>(n), {}};
}

void set_warning_handler(WarningHandler handler) { g_warning_handler.store(handler != nullptr ? handler : warn_to_stderr); }

void warn(const std::string& message) { g_warning_handler.load()(message); }

ThreadPool::ThreadPool(int threads, const StartWorker& start) {
  const StartWorker starter = start ? start : StartWorker(start_thread);
  const int wanted = std::max(threads, 1) - 1;
  const std::string failure = start_workers(wanted, starter);
  if (failure.empty()) return;
  // The system is at a limit (threads, or address space for their stacks): give half of what
  // was taken back, so that the work and the rest of the process have room.
  const int started = static_cast<int>(workers_.size());
  stop_workers();
  start_workers(started / 2, starter);
  warn("started " + std::to_string(started) + " of the " + std::to_string(wanted) + " worker threads asked for (" +
       failure + "); keeping " + std::to_string(workers_.size()) + " to leave room for the work: split calls run on " +
       std::to_string(size()) + " thread(s)");
}

ThreadPool::~ThreadPool() { stop_workers(); }

std::string ThreadPool::start_workers(int count, const StartWorker& start) {
  try {
    workers_.reserve(static_cast<std::size_t>(count));
    while (static_cast<int>(workers_.size()) < count) workers_.push_back(start([this] { work(); }));
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

void ThreadPool::stop_workers() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  stop_ = false;
}

void ThreadPool::run(int64_t tasks, FunctionRef<void(int64_t)> task) {
  if (tasks <= 0) return;
  Job job(task, tasks);
  if (!workers_.empty() && job.tasks > 1 && !t_inside_task) {
    {
      const std::lock_guard lock(mutex_);
      jobs_.push_back(&job);
    }
    if (job.tasks - 1 >= static_cast<int64_t>(workers_.size())) {
      wake_.notify_all();
    } else {
      for (int64_t i = 1; i < job.tasks; ++i) wake_.notify_one();
    }
    job.execute();
    std::unique_lock lock(mutex_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    job.idle.wait(lock, [&] { return job.users == 0; });
  } else {
    job.execute();
  }
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    Job* job = nullptr;
    wake_.wait(lock, [&] { return stop_ || (job = first_open_job()) != nullptr; });
    if (stop_) return;
    ++job->users;
    lock.unlock();
    job->execute();
    lock.lock();
    // Notified under the mutex: once it is released the caller may return and end the job.
    if (--job->users == 0) job->idle.notify_all();
  }
}

Job* ThreadPool::first_open_job() const {
  for (Job* job : jobs_) {
    if (job->open()) return job;
  }
  return nullptr;
}

namespace {

ThreadPool& pool() {
  static ThreadPool instance([] {
    const ThreadSetting setting = thread_setting(std::getenv("TILEOPS_CPU_THREADS"), std::thread::hardware_concurrency());
    if (!setting.warning.empty()) warn(setting.warning);
    return setting.threads;
  }());
  return instance;
}

// a * b for sizes (both at least 0), INT64_MAX when it does not fit.
int64_t saturating_product(int64_t a, int64_t b) {
  int64_t product = 0;
  return mul_fits(a, b, product) ? product : std::numeric_limits<int64_t>::max();
}

// The [begin, end) of part `index` when `count` items are cut into `parts` near-equal parts.
std::pair<int64_t, int64_t> part_range(int64_t count, int64_t parts, int64_t index) {
  const int64_t base = count / parts;
  const int64_t extra = count % parts;
  const int64_t begin = index * base + std::min(index, extra);
  return {begin, begin + base + (index < extra ? 1 : 0)};
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int thread_count() { return pool().size(); }

void run_tasks(int64_t tasks, FunctionRef<void(int64_t)> task) { pool().run(tasks, task); }

void parallel_for(int64_t count, int64_t item_bytes, FunctionRef<void(int64_t, int64_t)> body) {
  if (count <= 0) return;
  const int64_t total = saturating_product(count, std::max<int64_t>(item_bytes, 1));
  if (count == 1 || total < kMinParallelBytes) {
    body(0, count);
    return;
  }
  const int64_t threads = thread_count();
  if (threads == 1) {
    body(0, count);
    return;
  }
  const int64_t tasks =
      std::min({count, threads * kTasksPerThread, std::max(threads, total / kMinTaskBytes)});
  run_tasks(tasks, [&](int64_t index) {
    const auto [begin, end] = part_range(count, tasks, index);
    body(begin, end);
  });
}

void parallel_for_2d(int64_t rows, int64_t cols, int64_t elem_bytes, int64_t align,
                     FunctionRef<void(int64_t, int64_t, int64_t, int64_t)> body) {
  if (rows <= 0 || cols <= 0) return;
  const int64_t row_bytes = saturating_product(cols, elem_bytes);
  if (saturating_product(rows, row_bytes) < kMinParallelBytes) {  // one thread finishes it sooner
    body(0, rows, 0, cols);
    return;
  }
  const int64_t threads = thread_count();
  const int64_t wanted = threads * kTasksPerThread;
  if (rows >= wanted || saturating_product(rows, row_bytes) < kMinParallelBytes) {
    parallel_for(rows, row_bytes, [&](int64_t r0, int64_t r1) { body(r0, r1, 0, cols); });
    return;
  }
  align = std::max<int64_t>(align, 1);
  const int64_t min_block = ceil_div(ceil_div(kMinTaskBytes, elem_bytes), align) * align;
  const int64_t block =
      std::max(min_block, ceil_div(ceil_div(cols, ceil_div(wanted, rows)), align) * align);
  const int64_t blocks = ceil_div(cols, block);
  run_tasks(rows * blocks, [&](int64_t index) {
    const int64_t row = index / blocks;
    const int64_t c0 = (index % blocks) * block;
    body(row, row + 1, c0, std::min(cols, c0 + block));
  });
}

}  // namespace tileops::cpu
