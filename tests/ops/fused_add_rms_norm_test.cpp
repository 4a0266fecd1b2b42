// FusedAddRMSNormFwdOp (manifests/norm.yaml): the residual updated in place and returned as
// the aliased output, y from the stored (rounded) residual, both against values computed here,
// and the cpu plugin's kernel against the reference on rows with vector tails. Its workload rows
// run in numerics_test.cpp with every other op of the catalogue.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/fused_add_rms_norm.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);

Tensor random(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& v : values) v = uniform(rng);
  return Tensor::from_doubles(values, shape, dtype);
}

// The residual after the add, rounded to dtype, and y from it, row by row over n.
struct Expected {
  std::vector<double> residual, y;
};
Expected expected(const Tensor& x, const Tensor& residual, const Tensor& weight, double eps) {
  const std::vector<double> a = x.to_doubles(), b = residual.to_doubles(), w = weight.to_doubles();
  const std::size_t n = w.size();
  std::vector<double> sum(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) sum[i] = a[i] + b[i];
  Expected e{Tensor::from_doubles(sum, x.shape(), x.dtype()).to_doubles(), std::vector<double>(a.size())};
  for (std::size_t r = 0; r * n < a.size(); ++r) {
    double sq = 0;
    for (std::size_t j = 0; j < n; ++j) sq += e.residual[r * n + j] * e.residual[r * n + j];
    const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (std::size_t j = 0; j < n; ++j) e.y[r * n + j] = e.residual[r * n + j] * rstd * w[j];
  }
  return e;
}

}  // namespace

TEST_CASE("FusedAddRMSNorm adds x into residual in place, returns it as residual_out and normalizes it") {
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    const Tensor x = random({3, 8}, DType::float32, 1);
    const Tensor residual = random({3, 8}, DType::float32, 2);
    const Tensor weight = random({8}, DType::float32, 3);
    const Expected want = expected(x, residual, weight, 1e-6);
    FusedAddRMSNormFwdOp op({8}, 1e-6, target);
    const auto out = op(x, residual, weight);
    CHECK(out.residual_out.data_ptr() == residual.data_ptr());
    CHECK(out.residual_out.shape() == residual.shape());
    CHECK(out.y.data_ptr() != residual.data_ptr());
    const std::vector<double> got_residual = residual.to_doubles(), got_y = out.y.to_doubles();
    for (std::size_t i = 0; i < want.y.size(); ++i) {
      CHECK(got_residual[i] == doctest::Approx(want.residual[i]).epsilon(1e-6));
      CHECK(got_y[i] == doctest::Approx(want.y[i]).epsilon(1e-5));
    }
    REQUIRE(op.last_call() != nullptr);
    REQUIRE(op.last_call()->written.size() == 1);
    CHECK(op.last_call()->written[0] == "residual");
  }
}

TEST_CASE("FusedAddRMSNorm normalizes the residual as stored in half precision, not the exact sum") {
  // 1 + 2^-9 is not a bfloat16: the stored residual is 1, so every element of the row is 1 and
  // y is the weight exactly.
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    const Tensor x = Tensor::from_doubles(std::vector<double>(16, 1.0 / 512), {1, 16}, DType::bfloat16);
    const Tensor residual = Tensor::from_doubles(std::vector<double>(16, 1.0), {1, 16}, DType::bfloat16);
    const Tensor weight = Tensor::from_doubles(std::vector<double>(16, 0.5), {16}, DType::bfloat16);
    const auto out = FusedAddRMSNormFwdOp({16}, 1e-12, target)(x, residual, weight);
    for (double v : residual.to_doubles()) CHECK(v == 1.0);
    for (double v : out.y.to_doubles()) CHECK(v == 0.5);
  }
}

TEST_CASE("FusedAddRMSNorm's cpu kernel matches the reference on rows whose length leaves vector tails") {
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
    for (std::int64_t n : {1, 7, 37, 100}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(n);
      const Tensor x = random({5, n}, dtype, 4), residual = random({5, n}, dtype, 5), weight = random({n}, dtype, 6);
      const Tensor ref_residual = residual.clone();
      FusedAddRMSNormFwdOp fast({n}), reference({n}, std::nullopt, kReference);
      const auto got = fast(x, residual, weight);
      const auto want = reference(x, ref_residual, weight);
      REQUIRE(fast.last_call()->kernels.size() == 1);
      CHECK(fast.last_call()->kernels[0] == "cpu_fused_add_rms_norm");
      CHECK(testing::compare(residual, ref_residual).ok);
      CHECK(testing::compare(got.y, want.y).ok);
    }
  }
}

TEST_CASE("FusedAddRMSNorm refuses a residual that is not contiguous, and checks the manifest's rules") {
  const Tensor x = Tensor::zeros({4, 8}, DType::float32);
  const Tensor weight = Tensor::from_doubles(std::vector<double>(8, 1.0), {8}, DType::float32);
  const Tensor wide = Tensor::zeros({4, 16}, DType::float32);
  const Tensor strided = wide.as_strided({4, 8}, {16, 1}, 0);
  CHECK_THROWS_WITH_AS(FusedAddRMSNormFwdOp({8})(x, strided, weight),
                       doctest::Contains("input 'residual' must be contiguous"), ValueError);
  CHECK_THROWS_WITH_AS(FusedAddRMSNormFwdOp({8}, -1.0), doctest::Contains("eps must be positive"), ValueError);
  CHECK_THROWS_AS(FusedAddRMSNormFwdOp({8})(x, Tensor::zeros({4, 8}, DType::float16), weight), TypeError);
}
