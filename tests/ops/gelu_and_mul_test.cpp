// GeluAndMulFwdOp (manifests/elementwise.yaml): both GELU forms against values computed here,
// the cpu plugin's kernel against the reference on widths that leave vector tails, and the
// rule on `approximate`. Its workload rows run in numerics_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);

double gelu(double v, bool tanh_form) {
  if (tanh_form) return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
  return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}

Tensor random(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& v : values) v = uniform(rng);
  return Tensor::from_doubles(values, shape, dtype);
}

}  // namespace

TEST_CASE("GeluAndMul multiplies gelu of the first half of each row by its second half, in both forms") {
  const std::vector<double> x{-3.0, -0.5, 0.0, 1.0, 2.5, 2.0, -1.0, 4.0, 0.5, -2.0,
                              0.25, -6.0, 1.5, 3.0, -0.75, 1.0, 2.0, -3.0, 0.5, 0.125};
  for (const Target& target : {Target(), kReference}) {
    for (bool tanh_form : {false, true}) {
      CAPTURE(target.value_or("default"));
      CAPTURE(tanh_form);
      GeluAndMulFwdOp op(tanh_form ? "tanh" : "none", target);
      const Tensor y = op(Tensor::from_doubles(x, {2, 10}, DType::float32));
      REQUIRE(y.shape() == Shape{2, 5});
      const std::vector<double> got = y.to_doubles();
      for (std::size_t r = 0; r < 2; ++r) {
        for (std::size_t j = 0; j < 5; ++j) {
          const double want = gelu(x[r * 10 + j], tanh_form) * x[r * 10 + 5 + j];
          CHECK(got[r * 5 + j] == doctest::Approx(want).epsilon(1e-5).scale(1e-6));
        }
      }
    }
  }
}

TEST_CASE("GeluAndMul's cpu kernel matches the reference on widths that leave vector tails") {
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
    for (std::int64_t n : {1, 7, 37, 100}) {
      for (const char* approximate : {"none", "tanh"}) {
        CAPTURE(dtype_name(dtype));
        CAPTURE(n);
        CAPTURE(approximate);
        const Tensor x = random({3, 2 * n}, dtype, 9);
        GeluAndMulFwdOp fast(approximate), reference(approximate, kReference);
        const Tensor got = fast(x);
        REQUIRE(fast.last_call()->kernels.size() == 1);
        CHECK(fast.last_call()->kernels[0] == "cpu_gelu_and_mul");
        const testing::Comparison c = testing::compare(got, reference(x));
        CHECK_MESSAGE(c.ok, "max rel " << c.max_rel);
      }
    }
  }
}

TEST_CASE("GeluAndMul accepts only the erf and tanh forms and an even last axis") {
  CHECK_THROWS_WITH_AS(GeluAndMulFwdOp("sigmoid")(Tensor::zeros({2, 4}, DType::float32)),
                       doctest::Contains("approximate must be 'none' (erf) or 'tanh'"), ValueError);
  CHECK_THROWS_AS(GeluAndMulFwdOp()(Tensor::zeros({2, 5}, DType::float32)), ValueError);
}
