#include "thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu_kernels.hpp"

namespace tileops::cpu {
namespace {

// Below this many bytes moved a loop runs inline: waking a worker costs more than it saves.
constexpr int64_t kMinParallelBytes = int64_t{256} << 10;
// The least a task should move, so that claiming it is cheap next to running it.
constexpr int64_t kMinTaskBytes = int64_t{64} << 10;
// Tasks per thread: more than one evens out threads that start late or are preempted.
constexpr int64_t kTasksPerThread = 4;

int configured_threads() {
  if (const char* env = std::getenv("TILEOPS_CPU_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0) return static_cast<int>(std::min(value, 1024L));
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

thread_local bool t_inside_task = false;

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

class Pool {
 public:
  explicit Pool(int threads) : size_(threads) {
    workers_.reserve(static_cast<std::size_t>(threads - 1));
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }

  ~Pool() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int size() const { return size_; }

  void run(Job& job) {
    if (size_ > 1 && job.tasks > 1 && !t_inside_task) {
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

 private:
  void work() {
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

  Job* first_open_job() const {
    for (Job* job : jobs_) {
      if (job->open()) return job;
    }
    return nullptr;
  }

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Job*> jobs_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool instance(configured_threads());
  return instance;
}

int64_t saturating_product(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max() : a * b;
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

void run_tasks(int64_t tasks, FunctionRef<void(int64_t)> task) {
  if (tasks <= 0) return;
  Job job(task, tasks);
  pool().run(job);
}

void parallel_for(int64_t count, int64_t item_bytes, FunctionRef<void(int64_t, int64_t)> body) {
  if (count <= 0) return;
  const int64_t threads = thread_count();
  const int64_t total = saturating_product(count, std::max<int64_t>(item_bytes, 1));
  if (threads == 1 || count == 1 || total < kMinParallelBytes) {
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
  const int64_t threads = thread_count();
  const int64_t row_bytes = saturating_product(cols, elem_bytes);
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
