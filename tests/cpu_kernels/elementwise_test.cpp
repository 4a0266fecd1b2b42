#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

const std::vector<DType> kAddTypes = {DType::float32, DType::float16, DType::bfloat16, DType::int32,
                                      DType::int64};

Buffer add_input(DType dtype, int64_t size, unsigned seed) {
  return is_integral(dtype) ? random_buffer(dtype, size, -1000.0, 1000.0, seed)
                            : random_buffer(dtype, size, -2.0, 2.0, seed);
}

}  // namespace

TEST_CASE("add matches a double loop for every dtype, ISA, odd length and alpha") {
  for_each_isa([](Isa) {
    for (DType dtype : kAddTypes) {
      for (int64_t numel : {int64_t{1}, int64_t{7}, int64_t{33}, int64_t{4097}, int64_t{300007}}) {
        for (double alpha : {1.0, -3.0}) {
          INFO(name_of(dtype), " numel ", numel, " alpha ", alpha);
          const Buffer a = add_input(dtype, numel, 31);
          const Buffer b = add_input(dtype, numel, 32);
          Buffer y(dtype, numel);
          add(dtype, numel, a.data(), b.data(), y.data(), alpha);
          std::vector<double> want(static_cast<std::size_t>(numel));
          for (int64_t i = 0; i < numel; ++i) want[i] = a.get(i) + alpha * b.get(i);
          check_close(y, want, is_integral(dtype) ? 0.0 : tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("add in place into either operand writes what it writes out of place") {
  for_each_isa([](Isa) {
    for (DType dtype : kAddTypes) {
      INFO(name_of(dtype));
      const Buffer a = add_input(dtype, 100001, 33);
      const Buffer b = add_input(dtype, 100001, 34);
      Buffer out(dtype, a.size());
      add(dtype, a.size(), a.data(), b.data(), out.data(), 2.0);
      Buffer into_a = a;
      add(dtype, a.size(), into_a.data(), b.data(), into_a.data(), 2.0);
      CHECK(into_a.same_bytes(out));
      Buffer into_b = b;
      add(dtype, a.size(), a.data(), into_b.data(), into_b.data(), 2.0);
      CHECK(into_b.same_bytes(out));
    }
  });
}

TEST_CASE("integer add wraps around instead of overflowing") {
  for_each_isa([](Isa) {
    Buffer a(DType::int32, 1);
    Buffer b(DType::int32, 1);
    a.set(0, std::numeric_limits<int32_t>::max());
    b.set(0, 1);
    Buffer y(DType::int32, 1);
    add(DType::int32, 1, a.data(), b.data(), y.data(), 1.0);
    CHECK(y.get_int(0) == std::numeric_limits<int32_t>::min());
  });
}

TEST_CASE("add_row_broadcast adds one row to every row, in place too") {
  for_each_isa([](Isa) {
    for (DType dtype : kAddTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 5, 200}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          const Buffer a = add_input(dtype, rows * n, 35);
          const Buffer b = add_input(dtype, n, 36);
          Buffer y(dtype, rows * n);
          add_row_broadcast(dtype, rows, n, a.data(), b.data(), y.data(), -2.0);
          std::vector<double> want(static_cast<std::size_t>(rows * n));
          for (int64_t i = 0; i < rows * n; ++i) want[i] = a.get(i) - 2.0 * b.get(i % n);
          check_close(y, want, is_integral(dtype) ? 0.0 : tolerance(dtype));
          Buffer in_place = a;
          add_row_broadcast(dtype, rows, n, in_place.data(), b.data(), in_place.data(), -2.0);
          CHECK(in_place.same_bytes(y));
        }
      }
    }
  });
}

TEST_CASE("add rejects other dtypes and a fractional alpha for integers") {
  Buffer x(DType::int32, 4);
  CHECK_THROWS_WITH_AS(add(DType::uint8, 4, x.data(), x.data(), x.data(), 1.0),
                       doctest::Contains("add: dtype uint8 is not supported"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(add(DType::int32, 4, x.data(), x.data(), x.data(), 0.5),
                       doctest::Contains("alpha"), std::invalid_argument);
  CHECK_THROWS_AS(add_row_broadcast(DType::int64, 1, 2, x.data(), x.data(), x.data(), 1e300),
                  std::invalid_argument);
}
