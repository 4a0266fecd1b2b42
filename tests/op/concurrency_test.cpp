// Many threads calling shared op instances: cached calls take no exclusive
// lock, the selecting call commits or undoes before others use the selection, and failing
// calls leave the shared state intact. Run under TILEOPS_SANITIZE=thread and =address.
#include <doctest/doctest.h>

#include <thread>

#include "support/test_ops.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("8 threads x 10000 calls on shared instances, failing calls mixed in") {
  constexpr int kThreads = 8;
  constexpr int kCalls = 10000;
  ScaleTestFwdOp scale(2.0);
  ChainTestFwdOp chain;
  const Tensor good = ramp(4);
  const Tensor good_half = ramp(4, DType::float16);
  const Tensor mismatched_bias = ramp(5);
  scale(good);  // so that last_call exists before the readers start
  std::atomic<int> failures{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        try {
          switch ((i + t) % 5) {
            case 0: {
              if (scale(good).get(3) != 8.0) ++wrong;
              break;
            }
            case 1: {
              if (scale(good_half).get(0) != 2.0) ++wrong;
              break;
            }
            case 2:
              scale(good, mismatched_bias);  // fails the signature check
              ++wrong;
              break;
            case 3: {
              if (chain(good).get(1) != 12.0) ++wrong;
              break;
            }
            default: {
              const auto rec = scale.last_call();
              if (rec->op != "ScaleTestFwdOp") ++wrong;
              break;
            }
          }
        } catch (const ValueError&) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(failures == kThreads * kCalls / 5);
  CHECK(scale.serving_target() == std::string(BUILTIN));
  CHECK(scale.built_entries("scale").size() == 2);
  CHECK(chain.last_call()->stages.size() == 2);
}

TEST_CASE("concurrent first calls select the target once") {
  counters().reset();
  for (int round = 0; round < 20; ++round) {
    ScaleTestFwdOp op(1.0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) threads.emplace_back([&] { op(ramp(3)); });
    for (auto& th : threads) th.join();
    CHECK(op.serving_target() == std::string(BUILTIN));
    CHECK(op.built_entries("scale").size() == 1);
  }
}
