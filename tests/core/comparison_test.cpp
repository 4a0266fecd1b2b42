// testing::compare, the rule behind `tileops run --check` and the numerics tests: each element
// within the dtype's tolerance of max(|expected|, max(1, rms(expected))).
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "tileops/testing.hpp"

using namespace tileops;

namespace {
Tensor bf16(const std::vector<double>& v) { return Tensor::from_doubles(v, {static_cast<std::int64_t>(v.size())}, DType::bfloat16); }
Tensor f64(const std::vector<double>& v) { return Tensor::from_doubles(v, {static_cast<std::int64_t>(v.size())}, DType::float64); }
}  // namespace

TEST_CASE("compare holds an element that cancelled to near zero to the scale of the whole tensor") {
  // A long sum of bfloat16 terms ~20000 in size may land on 100 with an error of two ulps (256).
  const Tensor want = bf16({20000, -20000, 100, 20000});
  const testing::Comparison near_zero = testing::compare(bf16({20000, -20000, 356, 20000}), want);
  CHECK(near_zero.ok);
  CHECK(near_zero.max_abs == 256);
  CHECK(near_zero.max_rel == doctest::Approx(256.0 / 17320.5).epsilon(1e-3));
  // An error at the tensor's own scale still fails.
  CHECK_FALSE(testing::compare(bf16({20000, -20000, 2148, 20000}), want).ok);
  CHECK_FALSE(testing::compare(bf16({20000, -20000, 100, 22016}), want).ok);
}

TEST_CASE("compare takes the scale of float64 values past 1e154 without overflowing it") {
  const Tensor want = f64({1e200, -1e200, 1e200});
  CHECK(testing::compare(f64({1e200, -1e200, 1e200}), want).ok);
  CHECK_FALSE(testing::compare(f64({1e200, -1e200, 2e200}), want).ok);
}

TEST_CASE("compare keeps the floor of 1 for small values and flags NaN on one side only") {
  CHECK(testing::compare(bf16({0.0, 0.04}), bf16({0.0, 0.0})).ok);
  CHECK_FALSE(testing::compare(bf16({0.0, 0.07}), bf16({0.0, 0.0})).ok);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(testing::compare(bf16({nan, 1}), bf16({1, 1})).ok);
  CHECK(testing::compare(bf16({nan, 1}), bf16({nan, 1})).ok);
}
