#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

constexpr double kEps = 1e-5;

std::vector<double> rms_norm_reference(const Buffer& x, const Buffer* w, int64_t rows, int64_t n) {
  std::vector<double> y(static_cast<std::size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int64_t j = 0; j < n; ++j) ss += x.get(r * n + j) * x.get(r * n + j);
    const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + kEps);
    for (int64_t j = 0; j < n; ++j) {
      y[r * n + j] = x.get(r * n + j) * scale * (w != nullptr ? w->get(j) : 1.0);
    }
  }
  return y;
}

std::vector<double> layer_norm_reference(const Buffer& x, const Buffer* w, const Buffer* b,
                                         int64_t rows, int64_t n) {
  std::vector<double> y(static_cast<std::size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0.0;
    for (int64_t j = 0; j < n; ++j) mean += x.get(r * n + j);
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (int64_t j = 0; j < n; ++j) var += (x.get(r * n + j) - mean) * (x.get(r * n + j) - mean);
    var /= static_cast<double>(n);
    const double rstd = 1.0 / std::sqrt(var + kEps);
    for (int64_t j = 0; j < n; ++j) {
      y[r * n + j] = (x.get(r * n + j) - mean) * rstd * (w != nullptr ? w->get(j) : 1.0) +
                     (b != nullptr ? b->get(j) : 0.0);
    }
  }
  return y;
}

}  // namespace

TEST_CASE("rms_norm matches a double loop for every dtype, ISA, odd width and row count") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 3, 64}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          const Buffer x = random_buffer(dtype, rows * n, -2.0, 2.0, 1);
          const Buffer w = random_buffer(dtype, n, 0.5, 1.5, 2);
          Buffer y(dtype, rows * n);
          rms_norm(dtype, rows, n, x.data(), w.data(), y.data(), kEps);
          check_close(y, rms_norm_reference(x, &w, rows, n), tolerance(dtype));
          rms_norm(dtype, rows, n, x.data(), nullptr, y.data(), kEps);
          check_close(y, rms_norm_reference(x, nullptr, rows, n), tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("layer_norm matches a double loop with and without weight and bias") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 3, 64}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          // An offset mean checks that the variance does not cancel.
          const Buffer x = random_buffer(dtype, rows * n, 3.0, 5.0, 3);
          const Buffer w = random_buffer(dtype, n, 0.5, 1.5, 4);
          const Buffer b = random_buffer(dtype, n, -1.0, 1.0, 5);
          Buffer y(dtype, rows * n);
          layer_norm(dtype, rows, n, x.data(), w.data(), b.data(), y.data(), kEps);
          check_close(y, layer_norm_reference(x, &w, &b, rows, n), tolerance(dtype));
          layer_norm(dtype, rows, n, x.data(), nullptr, nullptr, y.data(), kEps);
          check_close(y, layer_norm_reference(x, nullptr, nullptr, rows, n), tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("rms_norm and layer_norm in place write what they write out of place") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      INFO(name_of(dtype));
      const int64_t rows = 5, n = 1000;
      const Buffer x = random_buffer(dtype, rows * n, -1.0, 1.0, 6);
      const Buffer w = random_buffer(dtype, n, 0.5, 1.5, 7);
      Buffer out(dtype, rows * n);
      Buffer in_place = x;
      rms_norm(dtype, rows, n, x.data(), w.data(), out.data(), kEps);
      rms_norm(dtype, rows, n, in_place.data(), w.data(), in_place.data(), kEps);
      CHECK(in_place.same_bytes(out));
      in_place = x;
      layer_norm(dtype, rows, n, x.data(), w.data(), nullptr, out.data(), kEps);
      layer_norm(dtype, rows, n, in_place.data(), w.data(), nullptr, in_place.data(), kEps);
      CHECK(in_place.same_bytes(out));
    }
  });
}

TEST_CASE("normalisations reject dtypes they do not list, negative sizes and null buffers") {
  Buffer x(DType::float32, 4);
  CHECK_THROWS_WITH_AS(rms_norm(DType::int32, 1, 4, x.data(), nullptr, x.data(), kEps),
                       doctest::Contains("dtype int32 is not supported"), std::invalid_argument);
  CHECK_THROWS_AS(layer_norm(DType::float64, 1, 4, x.data(), nullptr, nullptr, x.data(), kEps),
                  std::invalid_argument);
  CHECK_THROWS_WITH_AS(rms_norm(DType::float32, -1, 4, x.data(), nullptr, x.data(), kEps),
                       doctest::Contains("negative"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(rms_norm(DType::float32, 1, 4, nullptr, nullptr, x.data(), kEps),
                       doctest::Contains("'x' is null"), std::invalid_argument);
}

TEST_CASE("normalisations of zero rows or zero width write nothing and accept null buffers") {
  CHECK_NOTHROW(rms_norm(DType::float32, 0, 4, nullptr, nullptr, nullptr, kEps));
  CHECK_NOTHROW(layer_norm(DType::float16, 3, 0, nullptr, nullptr, nullptr, nullptr, kEps));
}
