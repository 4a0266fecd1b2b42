#include "thread_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

TEST_CASE("run_tasks runs every task exactly once") {
  for (int64_t tasks : {0, 1, 2, 3, 17, 1000}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(tasks));
    run_tasks(tasks, [&](int64_t i) { runs[i].fetch_add(1); });
    for (const auto& r : runs) CHECK(r.load() == 1);
  }
}

TEST_CASE(
    "parallel_for covers the range once, splitting large loops and running small ones inline") {
  for (int64_t count : {1, 5, 1000, 1 << 20}) {
    for (int64_t item_bytes : {1, 4096}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
      std::atomic<int> ranges{0};
      parallel_for(count, item_bytes, [&](int64_t b, int64_t e) {
        ranges.fetch_add(1);
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      int64_t wrong = 0;
      for (const auto& h : hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
      if (count * item_bytes < 4096) CHECK(ranges.load() == 1);
      if (count * item_bytes >= (64 << 20) && thread_count() > 1) CHECK(ranges.load() > 1);
    }
  }
}

TEST_CASE("parallel_for_2d covers the grid once with column splits on the alignment") {
  for (const auto& [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 1000003}, {3, 200001}, {1000, 333}}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(rows * cols));
    std::atomic<int> misaligned{0};
    parallel_for_2d(rows, cols, 4, kColumnAlign,
                    [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                      if (c0 % kColumnAlign != 0) misaligned.fetch_add(1);
                      for (int64_t r = r0; r < r1; ++r) {
                        for (int64_t c = c0; c < c1; ++c) hits[r * cols + c].fetch_add(1);
                      }
                    });
    int64_t wrong = 0;
    for (const auto& h : hits) wrong += h.load() != 1;
    CHECK(wrong == 0);
    CHECK(misaligned.load() == 0);
  }
}

TEST_CASE("a parallel loop inside a task runs inline and completes") {
  std::atomic<int64_t> total{0};
  run_tasks(8, [&](int64_t) {
    parallel_for(1 << 16, 1 << 10, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  });
  CHECK(total.load() == 8 * (1 << 16));
}

TEST_CASE("the first exception of a task reaches the caller after every task ran") {
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH_AS(run_tasks(64,
                                 [&](int64_t i) {
                                   ran.fetch_add(1);
                                   if (i == 3) throw std::runtime_error("task 3 failed");
                                 }),
                       "task 3 failed", std::runtime_error);
  CHECK(ran.load() == 64);
  std::atomic<int> after{0};
  run_tasks(16, [&](int64_t) { after.fetch_add(1); });
  CHECK(after.load() == 16);
}

TEST_CASE("many threads calling split kernels at once each get their own correct result") {
  const int64_t rows = 64, n = 4097;
  const Buffer x = random_buffer(DType::float32, rows * n, -1.0, 1.0, 91);
  const Buffer a = random_buffer(DType::bfloat16, 1 << 20, -1.0, 1.0, 92);
  Buffer want_norm(DType::float32, rows * n);
  Buffer want_sum(DType::float32, n);
  Buffer want_add(DType::bfloat16, a.size());
  rms_norm(DType::float32, rows, n, x.data(), nullptr, want_norm.data(), 1e-6);
  reduce_sum(DType::float32, DType::float32, 1, rows, n, x.data(), want_sum.data());
  add(DType::bfloat16, a.size(), a.data(), a.data(), want_add.data(), 1.0);

  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&, t] {
      for (int iteration = 0; iteration < 10; ++iteration) {
        if ((t + iteration) % 3 == 0) {
          Buffer y(DType::float32, rows * n);
          rms_norm(DType::float32, rows, n, x.data(), nullptr, y.data(), 1e-6);
          mismatches.fetch_add(!y.same_bytes(want_norm));
        } else if ((t + iteration) % 3 == 1) {
          Buffer y(DType::float32, n);
          reduce_sum(DType::float32, DType::float32, 1, rows, n, x.data(), y.data());
          mismatches.fetch_add(!y.same_bytes(want_sum));
        } else {
          Buffer y(DType::bfloat16, a.size());
          add(DType::bfloat16, a.size(), a.data(), a.data(), y.data(), 1.0);
          mismatches.fetch_add(!y.same_bytes(want_add));
        }
      }
    });
  }
  for (std::thread& c : callers) c.join();
  CHECK(mismatches.load() == 0);
}

namespace {

std::vector<std::string>& warnings() {
  static std::vector<std::string> w;
  return w;
}

// Captures the pool's warnings for the scope.
struct CapturedWarnings {
  CapturedWarnings() {
    warnings().clear();
    set_warning_handler([](const std::string& m) { warnings().push_back(m); });
  }
  ~CapturedWarnings() { set_warning_handler(nullptr); }
};

// Lets at most `limit` workers live at once, then fails as std::thread does when the system
// refuses a thread.
ThreadPool::StartWorker limited_to(int limit) {
  auto live = std::make_shared<std::atomic<int>>(0);
  return [live, limit](std::function<void()> body) {
    if (live->load() >= limit) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread creation");
    }
    ++*live;
    return std::thread([live, body = std::move(body)] {
      body();
      --*live;
    });
  };
}

}  // namespace

TEST_CASE("TILEOPS_CPU_THREADS: an integer from 1 to 1024 is taken, anything else warns and falls back") {
  CHECK(thread_setting(nullptr, 8).threads == 8);
  CHECK(thread_setting("", 8).warning.empty());
  CHECK(thread_setting("3", 8).threads == 3);
  CHECK(thread_setting("3", 8).warning.empty());
  CHECK(thread_setting("1024", 8).threads == 1024);
  for (const char* bad : {"abc", "0", "-1", "4x", " 4", "+4", "1e3"}) {
    const ThreadSetting s = thread_setting(bad, 6);
    CHECK(s.threads == 6);
    CHECK(s.warning.find("TILEOPS_CPU_THREADS='" + std::string(bad) + "' is not a thread count: expected an integer "
                         "from 1 to 1024; using the 6 hardware thread(s)") == 0);
  }
  for (const char* huge : {"1025", "99999999999999999999999999"}) {
    const ThreadSetting s = thread_setting(huge, 6);
    CHECK(s.threads == 1024);
    CHECK(s.warning == "TILEOPS_CPU_THREADS=" + std::string(huge) +
                           " is more than the 1024 threads the cpu plugin runs; using 1024");
  }
  CHECK(thread_setting(nullptr, 0).threads == 1);  // an unknown hardware concurrency is one thread
}

TEST_CASE("a pool whose worker threads cannot all be started keeps half of those it started and warns") {
  CapturedWarnings captured;
  ThreadPool pool(8, limited_to(6));
  CHECK(pool.size() == 4);
  REQUIRE(warnings().size() == 1);
  CHECK(warnings()[0].find("started 6 of the 7 worker threads asked for") == 0);
  CHECK(warnings()[0].find("Resource temporarily unavailable") != std::string::npos);
  CHECK(warnings()[0].find("keeping 3 to leave room for the work: split calls run on 4 thread(s)") != std::string::npos);
  std::vector<std::atomic<int>> runs(1000);
  pool.run(1000, [&](int64_t i) { runs[static_cast<std::size_t>(i)].fetch_add(1); });
  int wrong = 0;
  for (const auto& r : runs) wrong += r.load() != 1;
  CHECK(wrong == 0);
}

TEST_CASE("a pool that cannot start any worker runs every task on the calling thread") {
  CapturedWarnings captured;
  ThreadPool pool(16, limited_to(0));
  CHECK(pool.size() == 1);
  CHECK(warnings().size() == 1);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  std::atomic<int> ran{0};
  pool.run(64, [&](int64_t) {
    ran.fetch_add(1);
    if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
  });
  CHECK(ran.load() == 64);
  CHECK(elsewhere.load() == 0);
}

TEST_CASE("a pool of one thread starts no worker and warns about nothing") {
  CapturedWarnings captured;
  ThreadPool pool(1, limited_to(0));
  CHECK(pool.size() == 1);
  CHECK(warnings().empty());
}
