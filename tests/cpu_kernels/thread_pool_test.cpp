#include "thread_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
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
