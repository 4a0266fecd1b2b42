#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

TEST_CASE("silu_and_mul matches a double loop for every dtype, ISA, odd width and row count") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 3, 64}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          const Buffer x = random_buffer(dtype, rows * 2 * n, -6.0, 6.0, 21);
          Buffer y(dtype, rows * n);
          silu_and_mul(dtype, rows, n, x.data(), y.data());
          std::vector<double> want(static_cast<std::size_t>(rows * n));
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < n; ++j) {
              const double g = x.get(r * 2 * n + j);
              want[r * n + j] = g / (1.0 + std::exp(-g)) * x.get(r * 2 * n + n + j);
            }
          }
          check_close(y, want, tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("silu_and_mul of a single wide row is split over threads and still exact per column") {
  for_each_isa([](Isa) {
    const int64_t n = 300001;
    const Buffer x = random_buffer(DType::bfloat16, 2 * n, -4.0, 4.0, 22);
    Buffer y(DType::bfloat16, n);
    silu_and_mul(DType::bfloat16, 1, n, x.data(), y.data());
    std::vector<double> want(static_cast<std::size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      const double g = x.get(j);
      want[j] = g / (1.0 + std::exp(-g)) * x.get(n + j);
    }
    check_close(y, want, tolerance(DType::bfloat16));
  });
}

TEST_CASE("silu_and_mul saturates cleanly for large magnitudes") {
  for_each_isa([](Isa) {
    Buffer x(DType::float32, 4);
    x.set(0, 200.0);
    x.set(1, -200.0);
    x.set(2, 2.0);
    x.set(3, 3.0);
    Buffer y(DType::float32, 2);
    silu_and_mul(DType::float32, 1, 2, x.data(), y.data());
    CHECK(y.get(0) == doctest::Approx(400.0));
    CHECK(std::fabs(y.get(1)) < 1e-30);
  });
}

TEST_CASE("relu matches max(x, 0) for every dtype, ISA and odd length, and keeps NaN") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t numel : {int64_t{1}, int64_t{7}, int64_t{33}, int64_t{4097}, int64_t{1} << 20}) {
        INFO(name_of(dtype), " numel ", numel);
        Buffer x = random_buffer(dtype, numel, -1.0, 1.0, 23);
        x.set(numel / 2, std::numeric_limits<double>::quiet_NaN());
        Buffer y(dtype, numel);
        relu(dtype, numel, x.data(), y.data());
        std::vector<double> want = x.values();
        for (double& v : want) v = v < 0.0 ? 0.0 : v;
        check_close(y, want, 0.0);
        CHECK(std::isnan(y.get(numel / 2)));
      }
    }
  });
}

TEST_CASE("relu in place writes what it writes out of place") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      const Buffer x = random_buffer(dtype, 100003, -1.0, 1.0, 24);
      Buffer out(dtype, x.size());
      Buffer in_place = x;
      relu(dtype, x.size(), x.data(), out.data());
      relu(dtype, x.size(), in_place.data(), in_place.data());
      CHECK(in_place.same_bytes(out));
    }
  });
}

TEST_CASE("activations reject dtypes they do not list") {
  Buffer x(DType::int32, 8);
  CHECK_THROWS_AS(silu_and_mul(DType::int32, 1, 4, x.data(), x.data()), std::invalid_argument);
  CHECK_THROWS_WITH_AS(relu(DType::float64, 1, x.data(), x.data()),
                       doctest::Contains("relu: dtype float64"), std::invalid_argument);
}
