// MaxPool2dFwdOp and AvgPool2dFwdOp (manifests/pool.yaml): windows computed by hand (padding,
// stride, dilation, ceil_mode's last window, the average's divisors), NaN in a max window, the
// derived per-dimension attributes set after the base constructor, the refusals of bad sizes,
// and the cpu plugin's kernels against the reference. The workload rows run in numerics_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/pool.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);
using Sizes = std::vector<std::int64_t>;

// x [1, 1, h, w] holding value = w * row + column + offset.
Tensor ramp(std::int64_t h, std::int64_t w, double offset = 0) {
  std::vector<double> values(static_cast<std::size_t>(h * w));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) + offset;
  return Tensor::from_doubles(values, {1, 1, h, w}, DType::float32);
}

Tensor ones(std::int64_t h, std::int64_t w) {
  return Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(h * w), 1.0), {1, 1, h, w}, DType::float32);
}

Tensor random(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& v : values) v = uniform(rng);
  return Tensor::from_doubles(values, shape, dtype);
}

}  // namespace

TEST_CASE("MaxPool2d rule: the maximum over the window, padding never a candidate") {
  // x 4 x 4 = 0..15, window 3 x 3, stride 2, padding 1: windows start at rows and columns -1, 1.
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    const Tensor y = MaxPool2dFwdOp(std::int64_t{3}, std::int64_t{2}, std::int64_t{1}, std::int64_t{1}, false, target)(
        ramp(4, 4, -20.0));
    CHECK(y.shape() == Shape{1, 1, 2, 2});
    CHECK(y.to_doubles() == std::vector<double>{5 - 20, 7 - 20, 13 - 20, 15 - 20});
  }
}

TEST_CASE("MaxPool2d rule: dilation spaces the window's taps") {
  // x 5 x 5, window 2 x 2 with dilation 2, stride 1: y[i, j] = x[i + 2, j + 2].
  for (const Target& target : {Target(), kReference}) {
    const Tensor y = MaxPool2dFwdOp(std::int64_t{2}, std::int64_t{1}, std::int64_t{0}, std::int64_t{2}, false, target)(ramp(5, 5));
    REQUIRE(y.shape() == Shape{1, 1, 3, 3});
    CHECK(y.to_doubles() == std::vector<double>{12, 13, 14, 17, 18, 19, 22, 23, 24});
  }
}

TEST_CASE("MaxPool2d rule: ceil_mode keeps a last partial window that starts inside the input") {
  for (const Target& target : {Target(), kReference}) {
    // 5 x 5, window 2, stride 2: floor gives 2 windows, ceil 3 (the last one holds row 4 only).
    const Tensor floor_y = MaxPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, std::int64_t{1}, false, target)(ramp(5, 5));
    CHECK(floor_y.shape() == Shape{1, 1, 2, 2});
    const Tensor ceil_y = MaxPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, std::int64_t{1}, true, target)(ramp(5, 5));
    REQUIRE(ceil_y.shape() == Shape{1, 1, 3, 3});
    CHECK(ceil_y.to_doubles() == std::vector<double>{6, 8, 9, 16, 18, 19, 21, 23, 24});
    // 5 x 5, window 2, stride 2, padding 1: ceil would give 4 windows, but the 4th starts at 5,
    // in the right padding, so it is dropped: 3, as floor.
    const Tensor dropped = MaxPool2dFwdOp(std::int64_t{2}, std::int64_t{2}, std::int64_t{1}, std::int64_t{1}, true, target)(ramp(5, 5));
    CHECK(dropped.shape() == Shape{1, 1, 3, 3});
    CHECK(dropped.to_doubles() == std::vector<double>{0, 2, 4, 10, 12, 14, 20, 22, 24});
  }
}

TEST_CASE("MaxPool2d rule: a NaN in the window gives NaN, as PyTorch propagates it") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> values{1, 2, 3, 4, 5, 6, 7, 8, 9, nan, 11, 12, 13, 14, 15, 16};
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
    for (const Target& target : {Target(), kReference}) {
      CAPTURE(dtype_name(dtype));
      const Tensor x = Tensor::from_doubles(values, {1, 1, 4, 4}, dtype);
      const std::vector<double> y = MaxPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, std::int64_t{1}, false, target)(x).to_doubles();
      REQUIRE(y.size() == 4);
      CHECK(y[0] == 6);
      CHECK(y[1] == 8);
      CHECK(std::isnan(y[2]));
      CHECK(y[3] == 16);
    }
  }
}

TEST_CASE("AvgPool2d rule: count_include_pad divides by the window clipped to the padded input") {
  // ones 6 x 6, window 3, stride 2, padding 1, ceil_mode: windows start at -1, 1, 3, 5; the
  // last one is clipped by the padded input to 2 rows, one of them inside x. Per dimension:
  // real rows {2, 3, 3, 1}, padded rows {3, 3, 3, 2}.
  const double real[] = {2, 3, 3, 1};
  const double padded[] = {3, 3, 3, 2};
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    const Tensor include = AvgPool2dFwdOp(std::int64_t{3}, std::int64_t{2}, std::int64_t{1}, true, true, std::nullopt, target)(ones(6, 6));
    REQUIRE(include.shape() == Shape{1, 1, 4, 4});
    const std::vector<double> got = include.to_doubles();
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        CHECK(got[static_cast<std::size_t>(i * 4 + j)] ==
              doctest::Approx(real[i] * real[j] / (padded[i] * padded[j])).epsilon(1e-6));
      }
    }
    const Tensor exclude = AvgPool2dFwdOp(std::int64_t{3}, std::int64_t{2}, std::int64_t{1}, true, false, std::nullopt, target)(ones(6, 6));
    for (double v : exclude.to_doubles()) CHECK(v == 1.0);
  }
}

TEST_CASE("AvgPool2d rule: divisor_override replaces the window's area") {
  for (const Target& target : {Target(), kReference}) {
    // ramp 4 x 4, window 2, stride 2: window sums 10, 18, 42, 50, divided by 4 and by 5.
    CHECK(AvgPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, false, true, std::nullopt, target)(ramp(4, 4)).to_doubles() ==
          std::vector<double>{2.5, 4.5, 10.5, 12.5});
    const std::vector<double> by_five =
        AvgPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, false, true, std::int64_t{5}, target)(ramp(4, 4)).to_doubles();
    const double expected[] = {2, 3.6, 8.4, 10};
    REQUIRE(by_five.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) CHECK(by_five[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

TEST_CASE("AvgPool2d rule: a global window is the mean of each plane, per channel") {
  // [2, 3, 7, 7] holding c + n * 10 + (r * 7 + col) / 100 per plane: the mean adds 0.24.
  std::vector<double> values;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 49; ++i) values.push_back(c + n * 10 + i / 100.0);
    }
  }
  const Tensor x = Tensor::from_doubles(values, {2, 3, 7, 7}, DType::float32);
  for (const Target& target : {Target(), kReference}) {
    const Tensor y = AvgPool2dFwdOp(std::int64_t{7}, std::nullopt, std::int64_t{0}, false, true, std::nullopt, target)(x);
    REQUIRE(y.shape() == Shape{2, 3, 1, 1});
    const std::vector<double> got = y.to_doubles();
    for (int p = 0; p < 6; ++p) CHECK(got[static_cast<std::size_t>(p)] == doctest::Approx((p % 3) + (p / 3) * 10 + 0.24).epsilon(1e-6));
  }
}

TEST_CASE("Pool2d rule: derived attributes after the base constructor") {
  // Per-dimension sizes are not parameters: the base constructor checked only the manifest's
  // parameters, and derive() expanded them afterwards.
  const MaxPool2dFwdOp max_pool(Sizes{3, 2}, std::nullopt, Sizes{1, 0}, std::int64_t{2});
  CHECK(max_pool.kernel_h() == 3);
  CHECK(max_pool.kernel_w() == 2);
  CHECK(max_pool.stride_h() == 3);  // stride None: the kernel's
  CHECK(max_pool.stride_w() == 2);
  CHECK(max_pool.padding_h() == 1);
  CHECK(max_pool.padding_w() == 0);
  CHECK(max_pool.dilation_h() == 2);
  CHECK(max_pool.dilation_w() == 2);
  for (const char* name : {"kernel_size", "stride", "padding", "dilation", "ceil_mode"}) {
    CHECK_MESSAGE(max_pool.params().contains(name), name);
  }
  CHECK(max_pool.params().size() == 5);
  for (const char* name : {"kernel_h", "kernel_w", "stride_h", "stride_w", "padding_h", "padding_w", "dilation_h", "dilation_w"}) {
    CHECK_MESSAGE(!max_pool.params().contains(name), name);
  }
  const AvgPool2dFwdOp avg_pool(std::int64_t{4}, Sizes{2, 1}, std::int64_t{2});
  CHECK(avg_pool.kernel_h() == 4);
  CHECK(avg_pool.kernel_w() == 4);
  CHECK(avg_pool.stride_h() == 2);
  CHECK(avg_pool.stride_w() == 1);
  CHECK(avg_pool.padding_h() == 2);
  CHECK(avg_pool.padding_w() == 2);
  CHECK(avg_pool.params().size() == 6);
  CHECK_FALSE(avg_pool.params().contains("kernel_h"));
  // The check that refused a bad value ran on the parameters before derive() was reached.
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(Sizes{3, 3, 3}), doctest::Contains("per_axis: expected 2 values, got [3, 3, 3]"), ValueError);
}

TEST_CASE("Pool2d rule: non-positive sizes, padding above half the kernel and divisor 0 are refused at construction") {
  // The rules read let entries that the parameters alone settle, so the base constructor
  // applies them: no call is needed.
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{0}), doctest::Contains("kernel_size must be positive: expected kernel_size >= 1"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(Sizes{3, -1}), doctest::Contains("kW = -1"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3}, std::int64_t{0}), doctest::Contains("stride must be positive"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3}, std::nullopt, std::int64_t{0}, std::int64_t{0}),
                       doctest::Contains("dilation must be positive"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3}, std::nullopt, std::int64_t{-1}), doctest::Contains("padding must not be negative"),
                       ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3}, std::nullopt, std::int64_t{2}),
                       doctest::Contains("padding must be at most half the kernel: expected padding <= kernel_size // 2"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3}, std::nullopt, std::int64_t{2}), doctest::Contains("pH = 2"), ValueError);
  CHECK_THROWS_WITH_AS(AvgPool2dFwdOp(Sizes{4, 2}, std::nullopt, Sizes{2, 2}), doctest::Contains("pW = 2"), ValueError);
  CHECK_THROWS_WITH_AS(AvgPool2dFwdOp(std::int64_t{2}, std::nullopt, std::int64_t{0}, false, true, std::int64_t{0}),
                       doctest::Contains("divisor_override must not be 0"), ValueError);
  CHECK_THROWS_WITH_AS(AvgPool2dFwdOp(std::int64_t{2}, Sizes{1, 1, 1}), doctest::Contains("per_axis: expected 2 values"), ValueError);
}

TEST_CASE("Pool2d rule: an input too small for one window is refused naming the sizes seen") {
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3})(Tensor::zeros({1, 2, 2, 5}, DType::float32)),
                       doctest::Contains("the input is too small for the window: expected an output of at least 1 x 1"), ValueError);
  CHECK_THROWS_WITH_AS(MaxPool2dFwdOp(std::int64_t{3})(Tensor::zeros({1, 2, 2, 5}, DType::float32)), doctest::Contains("H_out = 0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(AvgPool2dFwdOp(std::int64_t{3}, std::int64_t{1}, std::int64_t{0})(Tensor::zeros({1, 1, 4, 2}, DType::float16)),
                       doctest::Contains("W_out = 0"), ValueError);
  // Dilation widens the window: 3 taps 2 apart need 5 rows.
  CHECK_THROWS_AS(MaxPool2dFwdOp(std::int64_t{3}, std::nullopt, std::int64_t{0}, std::int64_t{2})(Tensor::zeros({1, 1, 4, 9}, DType::float32)),
                  ValueError);
  CHECK_THROWS_AS(MaxPool2dFwdOp(std::int64_t{2})(Tensor::zeros({4, 4}, DType::float32)), Error);
  CHECK_THROWS_AS(MaxPool2dFwdOp(std::int64_t{2})(Tensor::zeros({1, 1, 4, 4}, DType::float64)), TypeError);
}

TEST_CASE("Pool2d rule: an empty batch or channel axis gives an empty output") {
  CHECK(MaxPool2dFwdOp(std::int64_t{2})(Tensor::empty({0, 3, 4, 4}, DType::float32)).shape() == Shape{0, 3, 2, 2});
  CHECK(AvgPool2dFwdOp(std::int64_t{2})(Tensor::empty({2, 0, 4, 4}, DType::bfloat16)).shape() == Shape{2, 0, 2, 2});
}

TEST_CASE("Pool2d rule: the default kernels match the reference kernels on every dtype") {
  struct Case {
    Shape shape;
    Sizes kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  const Case cases[] = {{{2, 5, 13, 17}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
                        {{1, 3, 33, 30}, {3, 2}, {2, 3}, {1, 0}, {2, 1}, true},
                        {{3, 4, 7, 7}, {7, 7}, {7, 7}, {0, 0}, {1, 1}, false},
                        {{2, 70, 9, 11}, {2, 5}, {1, 2}, {1, 2}, {1, 1}, true}};
  for (const Case& c : cases) {
    for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
      CAPTURE(c.shape);
      CAPTURE(dtype_name(dtype));
      const Tensor x = random(c.shape, dtype, 7);
      const Tensor max_fast = MaxPool2dFwdOp(c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode)(x);
      const Tensor max_ref = MaxPool2dFwdOp(c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode, kReference)(x);
      CHECK(max_fast.to_doubles() == max_ref.to_doubles());
      for (bool include_pad : {true, false}) {
        const Tensor avg_fast = AvgPool2dFwdOp(c.kernel, c.stride, c.padding, c.ceil_mode, include_pad)(x);
        const Tensor avg_ref = AvgPool2dFwdOp(c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, std::nullopt, kReference)(x);
        const testing::Comparison cmp = testing::compare(avg_fast, avg_ref);
        CHECK_MESSAGE(cmp.ok, "max rel " << cmp.max_rel);
      }
    }
  }
}
