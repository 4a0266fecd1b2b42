// RopeFwdOp (manifests/rope.yaml): the rotate-half rotation against values computed here, the
// positions input, the manifest's default theta and its shape rules. Its workload rows run in
// numerics_test.cpp with every other op of the catalogue.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/ops/rope.hpp"

using namespace tileops;

namespace {

// x [1, S, 1, 4]: position s rotates the pairs (0, 2) by s and (1, 3) by s / 100 (theta 10000).
std::vector<double> expected(const std::vector<double>& x, const std::vector<double>& positions) {
  std::vector<double> y(x.size());
  for (std::size_t s = 0; s < positions.size(); ++s) {
    const double* in = &x[s * 4];
    double* out = &y[s * 4];
    for (int i = 0; i < 2; ++i) {
      const double angle = positions[s] * std::pow(10000.0, -2.0 * i / 4.0);
      out[i] = in[i] * std::cos(angle) - in[i + 2] * std::sin(angle);
      out[i + 2] = in[i + 2] * std::cos(angle) + in[i] * std::sin(angle);
    }
  }
  return y;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
}

}  // namespace

TEST_CASE("RoPE rotates each half-pair by position times theta^(-2i/D), without positions, s is the position") {
  const std::vector<double> x{1, 2, 3, 4, 1, 2, 3, 4, -1, 0.5, 2, -3};
  RopeFwdOp op;
  CHECK(op.theta() == 10000.0);
  const Tensor y = op(Tensor::from_doubles(x, {1, 3, 1, 4}, DType::float32));
  check_near(y.to_doubles(), expected(x, {0, 1, 2}));
}

TEST_CASE("RoPE takes the positions input as the position of each sequence index") {
  const std::vector<double> x{1, 2, 3, 4, -1, 0.5, 2, -3};
  RopeFwdOp op;
  const Tensor positions = Tensor::from_doubles(std::vector<double>{7, 4096}, {2}, DType::int64);
  const Tensor y = op(Tensor::from_doubles(x, {1, 2, 1, 4}, DType::float32), positions);
  check_near(y.to_doubles(), expected(x, {7, 4096}));
}

TEST_CASE("RoPE checks the manifest's rules: an even head dimension and theta > 1") {
  RopeFwdOp op;
  CHECK_THROWS_WITH_AS(op(Tensor::zeros({1, 2, 1, 3}, DType::float32)), doctest::Contains("D % 2 == 0"), ValueError);
  CHECK_THROWS_WITH_AS(RopeFwdOp(1.0), doctest::Contains("theta > 1"), ValueError);
}

TEST_CASE("RoPE is in the catalogue with the manifest's default theta") {
  const auto op = find_op("RopeFwdOp").make({}, {});
  CHECK(op->params().at("theta") == Value(10000.0));
}
