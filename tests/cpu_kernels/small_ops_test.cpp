// The cpu kernels of the ops of issue 26 on raw buffers, for every ISA this CPU has: the fused
// residual add and RMSNorm, gelu-and-mul, the embedding lookup and the mean.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

TEST_CASE("fused_add_rms_norm stores the rounded sum in residual and normalizes it, for every dtype, ISA and odd width") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t n : kOddSizes) {
        for (int64_t rows : {1, 3, 64}) {
          INFO(name_of(dtype), " rows ", rows, " n ", n);
          const Buffer x = random_buffer(dtype, rows * n, -2.0, 2.0, 31);
          Buffer residual = random_buffer(dtype, rows * n, -2.0, 2.0, 32);
          const Buffer weight = random_buffer(dtype, n, 0.5, 1.5, 33);
          Buffer stored(dtype, rows * n), y(dtype, rows * n);
          for (int64_t i = 0; i < rows * n; ++i) stored.set(i, x.get(i) + residual.get(i));
          fused_add_rms_norm(dtype, rows, n, x.data(), residual.data(), weight.data(), y.data(), 1e-5);
          std::vector<double> want(static_cast<std::size_t>(rows * n));
          for (int64_t r = 0; r < rows; ++r) {
            double ss = 0.0;
            for (int64_t j = 0; j < n; ++j) ss += stored.get(r * n + j) * stored.get(r * n + j);
            const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + 1e-5);
            for (int64_t j = 0; j < n; ++j) want[r * n + j] = stored.get(r * n + j) * scale * weight.get(j);
          }
          // The sum is rounded once from float32, as the Buffer rounds it from double: equal
          // but where double rounding differs, one unit of the dtype.
          check_close(residual, stored.values(), tolerance(dtype));
          check_close(y, want, tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("fused_add_rms_norm with x as the residual itself doubles it, and rejects a null residual") {
  Buffer r = random_buffer(DType::float32, 2 * 9, -1.0, 1.0, 34);
  const std::vector<double> before = r.values();
  const Buffer w = random_buffer(DType::float32, 9, 1.0, 1.0, 35);
  Buffer y(DType::float32, 2 * 9);
  fused_add_rms_norm(DType::float32, 2, 9, r.data(), r.data(), w.data(), y.data(), 1e-6);
  for (int64_t i = 0; i < r.size(); ++i) CHECK(r.get(i) == 2 * before[i]);
  CHECK_THROWS_AS(fused_add_rms_norm(DType::float32, 2, 9, r.data(), nullptr, w.data(), y.data(), 1e-6),
                  std::invalid_argument);
  CHECK_THROWS_AS(fused_add_rms_norm(DType::int32, 2, 9, r.data(), r.data(), w.data(), y.data(), 1e-6),
                  std::invalid_argument);
}

TEST_CASE("gelu_and_mul matches gelu in double times the up half, for both forms, every dtype, ISA and odd width") {
  for_each_isa([](Isa) {
    for (bool tanh_form : {false, true}) {
      for (DType dtype : kFloatTypes) {
        for (int64_t n : kOddSizes) {
          for (int64_t rows : {1, 3, 64}) {
            INFO(name_of(dtype), " rows ", rows, " n ", n, " tanh ", tanh_form);
            const Buffer x = random_buffer(dtype, rows * 2 * n, -6.0, 6.0, 36);
            Buffer y(dtype, rows * n);
            gelu_and_mul(dtype, rows, n, x.data(), y.data(), tanh_form);
            std::vector<double> want(static_cast<std::size_t>(rows * n));
            for (int64_t r = 0; r < rows; ++r) {
              for (int64_t j = 0; j < n; ++j) {
                const double g = x.get(r * 2 * n + j);
                const double u = std::sqrt(2.0 / std::numbers::pi) * (g + 0.044715 * g * g * g);
                const double gelu =
                    tanh_form ? g / (1.0 + std::exp(-2.0 * u)) : g * 0.5 * std::erfc(-g * std::sqrt(0.5));
                want[r * n + j] = gelu * x.get(r * 2 * n + n + j);
              }
            }
            check_close(y, want, tolerance(dtype));
          }
        }
      }
    }
  });
}

TEST_CASE("embedding copies the rows of int32 and int64 ids, and refuses an id outside the vocabulary writing nothing") {
  for (DType index : {DType::int32, DType::int64}) {
    for (DType dtype : {DType::float32, DType::bfloat16, DType::float64}) {
      INFO(name_of(index), " ", name_of(dtype));
      const int64_t vocab = 50, hidden = 33, count = 300;
      const Buffer weight = random_buffer(dtype, vocab * hidden, -1.0, 1.0, 37);
      Buffer ids(index, count);
      for (int64_t i = 0; i < count; ++i) ids.set(i, static_cast<double>((i * 7) % vocab));
      Buffer y(dtype, count * hidden);
      embedding(dtype, index, count, vocab, hidden, ids.data(), weight.data(), y.data());
      for (int64_t i = 0; i < count; ++i) {
        for (int64_t h = 0; h < hidden; ++h) REQUIRE(y.get(i * hidden + h) == weight.get(ids.get_int(i) * hidden + h));
      }
      Buffer untouched(dtype, count * hidden);
      const Buffer blank = untouched;
      for (double bad : {-1.0, 50.0}) {
        ids.set(count - 1, bad);
        CHECK_THROWS_AS(embedding(dtype, index, count, vocab, hidden, ids.data(), weight.data(), untouched.data()),
                        std::invalid_argument);
        CHECK(untouched.same_bytes(blank));
      }
    }
  }
  CHECK_THROWS_AS(embedding(DType::float32, DType::float32, 1, 1, 1, nullptr, nullptr, nullptr), std::invalid_argument);
  const Buffer table(DType::float32, 4 * 8);
  embedding(DType::float32, DType::int64, 0, 4, 8, nullptr, table.data(), nullptr);  // no ids: nothing written
}

TEST_CASE("reduce_mean matches a double loop over rows, packed and blocked columns and split axes, for every ISA") {
  struct Extents {
    int64_t outer, reduce, inner;
  };
  const Extents shapes[] = {{3, 7, 1}, {2, 4097, 1}, {4, 7, 3}, {3, 33, 300}, {2, 9, 4500}, {1, 1 << 20, 1},
                            {1, 200000, 3}, {1, 4000, 600}};
  const std::pair<DType, DType> pairs[] = {{DType::float32, DType::float32},
                                           {DType::bfloat16, DType::bfloat16},
                                           {DType::float16, DType::float32},
                                           {DType::float64, DType::float64}};
  for_each_isa([&](Isa) {
    for (const auto& [in, out] : pairs) {
      for (const Extents& s : shapes) {
        INFO(name_of(in), " -> ", name_of(out), " [", s.outer, ", ", s.reduce, ", ", s.inner, "]");
        const Buffer x = random_buffer(in, s.outer * s.reduce * s.inner, -1.0, 3.0, 38);
        Buffer y(out, s.outer * s.inner);
        reduce_mean(in, out, s.outer, s.reduce, s.inner, x.data(), y.data());
        std::vector<double> want(static_cast<std::size_t>(s.outer * s.inner));
        for (int64_t o = 0; o < s.outer; ++o) {
          for (int64_t i = 0; i < s.inner; ++i) {
            double acc = 0.0;
            for (int64_t r = 0; r < s.reduce; ++r) acc += x.get((o * s.reduce + r) * s.inner + i);
            want[o * s.inner + i] = acc / static_cast<double>(s.reduce);
          }
        }
        check_close(y, want, tolerance(out));
      }
    }
  });
}

TEST_CASE("reduce_mean over an empty axis is NaN, and refuses integer inputs") {
  Buffer y(DType::bfloat16, 4);
  reduce_mean(DType::bfloat16, DType::bfloat16, 2, 0, 2, nullptr, y.data());
  for (int64_t i = 0; i < 4; ++i) CHECK(std::isnan(y.get(i)));
  Buffer x(DType::int32, 4), out(DType::int64, 1);
  CHECK_THROWS_AS(reduce_mean(DType::int32, DType::int64, 1, 4, 1, x.data(), out.data()), std::invalid_argument);
}
