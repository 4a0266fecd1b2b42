#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

constexpr double kEps = 1e-5;
constexpr double kMomentum = 0.1;

struct Shape {
  int64_t N, C, inner;
};

// inner == 1 with one and several batch chunks, small and odd inner, count == 2, and channels
// too large to be normalised while in cache.
const std::vector<Shape> kShapes = {{2, 3, 1},    {7, 5, 1},    {300, 33, 1}, {600, 1000, 1},
                                    {4, 3, 7},    {2, 16, 33},  {3, 2, 4097}, {1, 1, 2},
                                    {16, 8, 100}, {4, 2, 70001}};

std::vector<float> random_floats(int64_t size, double lo, double hi, unsigned seed) {
  const Buffer b = random_buffer(DType::float32, size, lo, hi, seed);
  std::vector<float> out(static_cast<std::size_t>(size));
  for (int64_t i = 0; i < size; ++i) out[i] = static_cast<float>(b.get(i));
  return out;
}

void check_floats(const std::vector<float>& got, const std::vector<double>& want, double rtol) {
  Buffer b(DType::float32, static_cast<int64_t>(got.size()));
  for (std::size_t i = 0; i < got.size(); ++i) b.set(static_cast<int64_t>(i), got[i]);
  check_close(b, want, rtol);
}

std::vector<double> affine_reference(const Buffer& x, const Shape& s,
                                     const std::vector<double>& mean,
                                     const std::vector<double>& rstd, const std::vector<float>& w,
                                     const std::vector<float>& b) {
  std::vector<double> y(static_cast<std::size_t>(x.size()));
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t c = 0; c < s.C; ++c) {
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t at = (n * s.C + c) * s.inner + i;
        y[at] = (x.get(at) - mean[c]) * rstd[c] * w[c] + b[c];
      }
    }
  }
  return y;
}

}  // namespace

TEST_CASE(
    "batch_norm_infer normalises with the running statistics for every dtype, ISA and layout") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (const Shape& s : kShapes) {
        INFO(name_of(dtype), " [", s.N, ", ", s.C, ", ", s.inner, "]");
        const Buffer x = random_buffer(dtype, s.N * s.C * s.inner, 2.0, 4.0, 51);
        const std::vector<float> rm = random_floats(s.C, 2.5, 3.5, 52);
        const std::vector<float> rv = random_floats(s.C, 0.5, 2.0, 53);
        const std::vector<float> w = random_floats(s.C, 0.5, 1.5, 54);
        const std::vector<float> b = random_floats(s.C, -1.0, 1.0, 55);
        std::vector<double> mean(rm.begin(), rm.end());
        std::vector<double> rstd(static_cast<std::size_t>(s.C));
        for (int64_t c = 0; c < s.C; ++c) rstd[c] = 1.0 / std::sqrt(rv[c] + kEps);
        Buffer y(dtype, x.size());
        batch_norm_infer(dtype, s.N, s.C, s.inner, x.data(), rm.data(), rv.data(), w.data(),
                         b.data(), y.data(), kEps);
        check_close(y, affine_reference(x, s, mean, rstd, w, b), tolerance(dtype));
        const std::vector<float> ones(static_cast<std::size_t>(s.C), 1.0f);
        const std::vector<float> zeros(static_cast<std::size_t>(s.C), 0.0f);
        batch_norm_infer(dtype, s.N, s.C, s.inner, x.data(), rm.data(), rv.data(), nullptr, nullptr,
                         y.data(), kEps);
        check_close(y, affine_reference(x, s, mean, rstd, ones, zeros), tolerance(dtype));
      }
    }
  });
}

TEST_CASE(
    "batch_norm_train uses batch statistics and updates running stats with the unbiased variance") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (const Shape& s : kShapes) {
        INFO(name_of(dtype), " [", s.N, ", ", s.C, ", ", s.inner, "]");
        // A mean far from zero next to the spread checks that the variance does not cancel.
        const Buffer x = random_buffer(dtype, s.N * s.C * s.inner, 10.0, 11.0, 56);
        const std::vector<float> w = random_floats(s.C, 0.5, 1.5, 57);
        const std::vector<float> b = random_floats(s.C, -1.0, 1.0, 58);
        std::vector<float> running_mean = random_floats(s.C, -1.0, 1.0, 59);
        std::vector<float> running_var = random_floats(s.C, 0.5, 2.0, 60);
        const std::vector<float> rm0 = running_mean, rv0 = running_var;
        std::vector<float> mean_out(static_cast<std::size_t>(s.C));
        std::vector<float> rstd_out(static_cast<std::size_t>(s.C));
        Buffer y(dtype, x.size());
        batch_norm_train(dtype, s.N, s.C, s.inner, x.data(), w.data(), b.data(), y.data(),
                         mean_out.data(), rstd_out.data(), running_mean.data(), running_var.data(),
                         kMomentum, kEps);

        const double count = static_cast<double>(s.N * s.inner);
        std::vector<double> mean(static_cast<std::size_t>(s.C)), var(mean.size()),
            rstd(mean.size());
        std::vector<double> want_rm(mean.size()), want_rv(mean.size());
        for (int64_t c = 0; c < s.C; ++c) {
          for (int64_t n = 0; n < s.N; ++n) {
            for (int64_t i = 0; i < s.inner; ++i) mean[c] += x.get((n * s.C + c) * s.inner + i);
          }
          mean[c] /= count;
          for (int64_t n = 0; n < s.N; ++n) {
            for (int64_t i = 0; i < s.inner; ++i) {
              const double d = x.get((n * s.C + c) * s.inner + i) - mean[c];
              var[c] += d * d;
            }
          }
          var[c] /= count;
          rstd[c] = 1.0 / std::sqrt(var[c] + kEps);
          want_rm[c] = (1 - kMomentum) * rm0[c] + kMomentum * mean[c];
          want_rv[c] = (1 - kMomentum) * rv0[c] + kMomentum * var[c] * count / (count - 1);
        }
        check_close(y, affine_reference(x, s, mean, rstd, w, b), tolerance(dtype));
        check_floats(mean_out, mean, 1e-5);
        check_floats(rstd_out, rstd, 1e-4);
        check_floats(running_mean, want_rm, 1e-5);
        check_floats(running_var, want_rv, 1e-4);
      }
    }
  });
}

TEST_CASE("batch_norm_train without running statistics or affine parameters, in place") {
  for_each_isa([](Isa) {
    const Shape s{8, 4, 50};
    const Buffer x = random_buffer(DType::bfloat16, s.N * s.C * s.inner, -1.0, 1.0, 61);
    std::vector<float> mean_out(4), rstd_out(4), mean2(4), rstd2(4);
    Buffer out(DType::bfloat16, x.size());
    batch_norm_train(DType::bfloat16, s.N, s.C, s.inner, x.data(), nullptr, nullptr, out.data(),
                     mean_out.data(), rstd_out.data(), nullptr, nullptr, kMomentum, kEps);
    Buffer in_place = x;
    batch_norm_train(DType::bfloat16, s.N, s.C, s.inner, in_place.data(), nullptr, nullptr,
                     in_place.data(), mean2.data(), rstd2.data(), nullptr, nullptr, kMomentum,
                     kEps);
    CHECK(in_place.same_bytes(out));
    CHECK(mean2 == mean_out);
  });
}

TEST_CASE("batch_norm_train needs two values per channel") {
  Buffer x(DType::float32, 3);
  std::vector<float> stats(3);
  CHECK_THROWS_WITH_AS(
      batch_norm_train(DType::float32, 1, 3, 1, x.data(), nullptr, nullptr, x.data(), stats.data(),
                       stats.data(), nullptr, nullptr, kMomentum, kEps),
      doctest::Contains("at least 2"), std::invalid_argument);
  CHECK_THROWS_AS(batch_norm_infer(DType::int32, 1, 3, 1, x.data(), stats.data(), stats.data(),
                                   nullptr, nullptr, x.data(), kEps),
                  std::invalid_argument);
}
