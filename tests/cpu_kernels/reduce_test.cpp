#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <tuple>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

struct Shape {
  int64_t outer, reduce, inner;
};

// inner == 1, packed small inner, column blocks, reduce == 1, and shapes that split the reduce
// axis over threads because they have too few outputs.
const std::vector<Shape> kShapes = {{1, 1, 1},     {3, 7, 1},     {2, 4097, 1},    {5, 33, 2},
                                    {4, 7, 3},     {3, 4097, 7},  {2, 65, 33},     {3, 33, 300},
                                    {2, 100, 600}, {64, 1, 5},    {1, 1 << 20, 1}, {1, 200000, 3},
                                    {2, 9, 4500},  {1, 4000, 600}};

const std::vector<std::pair<DType, DType>> kFloatPairs = {
    {DType::float32, DType::float32},  {DType::float32, DType::float64},
    {DType::float16, DType::float16},  {DType::float16, DType::float32},
    {DType::float16, DType::float64},  {DType::bfloat16, DType::bfloat16},
    {DType::bfloat16, DType::float32}, {DType::bfloat16, DType::float64},
    {DType::float64, DType::float64},  {DType::float64, DType::float32}};

// Sums stay within the range of every output dtype.
Buffer sum_input(DType dtype, const Shape& s, unsigned seed) {
  const double scale = 1.0 / std::max<double>(1.0, static_cast<double>(s.reduce) / 64.0);
  return random_buffer(dtype, s.outer * s.reduce * s.inner, 0.5 * scale, 1.5 * scale, seed);
}

// Powers of two and -1: every product is exact, and rare enough away from 1 that no partial
// product leaves the float32 range.
Buffer prod_input(DType dtype, const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  const double away = std::min(0.1, 20.0 / static_cast<double>(s.reduce));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Buffer b(dtype, s.outer * s.reduce * s.inner);
  for (int64_t i = 0; i < b.size(); ++i) {
    const double p = u(rng);
    b.set(i, p < away / 3 ? 2.0 : p < 2 * away / 3 ? 0.5 : p < away ? -1.0 : 1.0);
  }
  return b;
}

// The double-precision reduction, rounded to the output dtype.
Buffer float_reference(bool sum, const Buffer& x, DType out, const Shape& s) {
  Buffer y(out, s.outer * s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double acc = sum ? 0.0 : 1.0;
      for (int64_t r = 0; r < s.reduce; ++r) {
        const double v = x.get((o * s.reduce + r) * s.inner + i);
        acc = sum ? acc + v : acc * v;
      }
      y.set(o * s.inner + i, acc);
    }
  }
  return y;
}

void check_float_reductions(bool sum) {
  for_each_isa([&](Isa) {
    for (const auto& [in, out] : kFloatPairs) {
      for (const Shape& s : kShapes) {
        INFO(name_of(in), " -> ", name_of(out), " [", s.outer, ", ", s.reduce, ", ", s.inner, "]");
        const Buffer x = sum ? sum_input(in, s, 41) : prod_input(in, s, 42);
        Buffer y(out, s.outer * s.inner);
        if (sum) {
          reduce_sum(in, out, s.outer, s.reduce, s.inner, x.data(), y.data());
        } else {
          reduce_prod(in, out, s.outer, s.reduce, s.inner, x.data(), y.data());
        }
        check_close(y, float_reference(sum, x, out, s).values(), tolerance(out));
      }
    }
  });
}

}  // namespace

TEST_CASE("reduce_sum matches a double loop for every dtype pair, ISA and axis layout") {
  check_float_reductions(true);
}

TEST_CASE("reduce_prod matches a double loop for every dtype pair, ISA and axis layout") {
  check_float_reductions(false);
}

TEST_CASE("integer reductions accumulate in int64 and wrap around like a plain loop") {
  for_each_isa([](Isa) {
    for (DType in : {DType::int32, DType::int64}) {
      for (const Shape& s : kShapes) {
        INFO(name_of(in), " [", s.outer, ", ", s.reduce, ", ", s.inner, "]");
        const int64_t numel = s.outer * s.reduce * s.inner;
        const Buffer sum_x = random_buffer(in, numel, -1000.0, 1000.0, 43);
        const Buffer prod_x = random_buffer(in, numel, -3.0, 4.0, 44);
        Buffer sum_y(DType::int64, s.outer * s.inner);
        Buffer prod_y(DType::int64, s.outer * s.inner);
        reduce_sum(in, DType::int64, s.outer, s.reduce, s.inner, sum_x.data(), sum_y.data());
        reduce_prod(in, DType::int64, s.outer, s.reduce, s.inner, prod_x.data(), prod_y.data());
        int64_t mismatches = 0;
        for (int64_t o = 0; o < s.outer; ++o) {
          for (int64_t i = 0; i < s.inner; ++i) {
            uint64_t sum = 0, prod = 1;
            for (int64_t r = 0; r < s.reduce; ++r) {
              const int64_t at = (o * s.reduce + r) * s.inner + i;
              sum += static_cast<uint64_t>(sum_x.get_int(at));
              prod *= static_cast<uint64_t>(prod_x.get_int(at));
            }
            mismatches += sum_y.get_int(o * s.inner + i) != static_cast<int64_t>(sum);
            mismatches += prod_y.get_int(o * s.inner + i) != static_cast<int64_t>(prod);
          }
        }
        CHECK(mismatches == 0);
      }
    }
  });
}

TEST_CASE("an empty reduce axis gives the identity, and no outputs write nothing") {
  Buffer y(DType::bfloat16, 6);
  reduce_prod(DType::bfloat16, DType::bfloat16, 2, 0, 3, nullptr, y.data());
  check_close(y, std::vector<double>(6, 1.0), 0.0);
  reduce_sum(DType::bfloat16, DType::bfloat16, 2, 0, 3, nullptr, y.data());
  check_close(y, std::vector<double>(6, 0.0), 0.0);
  Buffer yi(DType::int64, 2);
  reduce_prod(DType::int32, DType::int64, 1, 0, 2, nullptr, yi.data());
  CHECK(yi.get_int(0) == 1);
  CHECK_NOTHROW(reduce_sum(DType::float32, DType::float32, 0, 5, 3, nullptr, nullptr));
}

TEST_CASE("reductions reject dtype pairs they do not list") {
  Buffer x(DType::float32, 4);
  Buffer y(DType::float64, 4);
  CHECK_THROWS_WITH_AS(reduce_sum(DType::float32, DType::float16, 1, 4, 1, x.data(), y.data()),
                       doctest::Contains("float32 -> float16 are not supported"),
                       std::invalid_argument);
  CHECK_THROWS_AS(reduce_sum(DType::int32, DType::int32, 1, 4, 1, x.data(), y.data()),
                  std::invalid_argument);
  CHECK_THROWS_AS(reduce_prod(DType::float16, DType::int64, 1, 4, 1, x.data(), y.data()),
                  std::invalid_argument);
  CHECK_THROWS_AS(reduce_prod(DType::bool_, DType::int64, 1, 4, 1, x.data(), y.data()),
                  std::invalid_argument);
}
