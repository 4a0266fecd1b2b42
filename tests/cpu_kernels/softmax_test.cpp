#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

std::vector<double> softmax_reference(const Buffer& x, int64_t rows, int64_t n) {
  std::vector<double> y(static_cast<std::size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) max = std::max(max, x.get(r * n + j));
    double sum = 0.0;
    for (int64_t j = 0; j < n; ++j) sum += std::exp(x.get(r * n + j) - max);
    for (int64_t j = 0; j < n; ++j) y[r * n + j] = std::exp(x.get(r * n + j) - max) / sum;
  }
  return y;
}

}  // namespace

TEST_CASE("softmax matches a double loop for every dtype, ISA, odd width and row count") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 3, 64}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          const Buffer x = random_buffer(dtype, rows * n, -8.0, 8.0, 11);
          Buffer y(dtype, rows * n);
          softmax(dtype, rows, n, x.data(), y.data());
          check_close(y, softmax_reference(x, rows, n), tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("softmax subtracts the row maximum, so huge logits do not overflow") {
  for_each_isa([](Isa) {
    Buffer x(DType::float32, 3);
    x.set(0, 1000.0);
    x.set(1, 999.0);
    x.set(2, -1e30);
    Buffer y(DType::float32, 3);
    softmax(DType::float32, 1, 3, x.data(), y.data());
    const double e = std::exp(-1.0);
    check_close(y, {1.0 / (1.0 + e), e / (1.0 + e), 0.0}, 1e-6);
  });
}

TEST_CASE("softmax gives masked (-inf) entries exactly zero") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      INFO(name_of(dtype));
      Buffer x(dtype, 40);
      for (int64_t j = 0; j < 40; ++j)
        x.set(j, j % 3 == 0 ? -std::numeric_limits<double>::infinity() : 0.5);
      Buffer y(dtype, 40);
      softmax(dtype, 1, 40, x.data(), y.data());
      for (int64_t j = 0; j < 40; ++j) {
        if (j % 3 == 0) CHECK(y.get(j) == 0.0);
      }
      check_close(y, softmax_reference(x, 1, 40), tolerance(dtype));
    }
  });
}

TEST_CASE("softmax in place writes what it writes out of place") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      INFO(name_of(dtype));
      const Buffer x = random_buffer(dtype, 7 * 300, -3.0, 3.0, 12);
      Buffer out(dtype, x.size());
      Buffer in_place = x;
      softmax(dtype, 7, 300, x.data(), out.data());
      softmax(dtype, 7, 300, in_place.data(), in_place.data());
      CHECK(in_place.same_bytes(out));
    }
  });
}

TEST_CASE("softmax rejects integer dtypes") {
  Buffer x(DType::int64, 4);
  CHECK_THROWS_WITH_AS(softmax(DType::int64, 1, 4, x.data(), x.data()),
                       doctest::Contains("softmax: dtype int64"), std::invalid_argument);
}
