// MeanFwdOp (manifests/reduction.yaml): means over one axis, several axes and every axis against
// values computed here, keepdim and the output dtype, NaN over an empty axis, the refusal of
// integer inputs, and the cpu plugin's kernel against the reference on the layouts its reduction
// takes apart (rows, packed columns, column blocks, a reduced axis split over threads). Its
// workload rows run in numerics_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);

Tensor random(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 3.0);
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& v : values) v = uniform(rng);
  return Tensor::from_doubles(values, shape, dtype);
}

}  // namespace

TEST_CASE("Mean averages over an axis, a list of axes or every axis, with keepdim and an output dtype") {
  // x [2, 3]: rows 1 2 3 and 4 5 6.
  const Tensor x = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}, DType::float32);
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    CHECK(MeanFwdOp(std::int64_t{-1}, false, std::nullopt, target)(x).to_doubles() == std::vector<double>{2, 5});
    const Tensor columns = MeanFwdOp(std::vector<std::int64_t>{0}, true, std::nullopt, target)(x);
    CHECK(columns.shape() == Shape{1, 3});
    CHECK(columns.to_doubles() == std::vector<double>{2.5, 3.5, 4.5});
    const Tensor all = MeanFwdOp(std::nullopt, false, std::nullopt, target)(x);
    CHECK(all.shape() == Shape{});
    CHECK(all.to_doubles() == std::vector<double>{3.5});
    const Tensor wide = MeanFwdOp(std::int64_t{1}, false, DType::float64, target)(x.to(DType::bfloat16));
    CHECK(wide.dtype() == DType::float64);
    CHECK(wide.to_doubles() == std::vector<double>{2, 5});
  }
}

TEST_CASE("Mean over an empty axis is NaN, and over no output is empty") {
  for (const Target& target : {Target(), kReference}) {
    const Tensor y = MeanFwdOp(std::int64_t{0}, false, std::nullopt, target)(Tensor::empty({0, 3}, DType::float32));
    REQUIRE(y.shape() == Shape{3});
    for (double v : y.to_doubles()) CHECK(std::isnan(v));
    CHECK(MeanFwdOp(std::int64_t{1}, false, std::nullopt, target)(Tensor::empty({0, 3}, DType::float16)).shape() ==
          Shape{0});
  }
}

TEST_CASE("Mean takes floating inputs only and checks its axes") {
  CHECK_THROWS_AS(MeanFwdOp()(Tensor::zeros({4}, DType::int32)), TypeError);
  CHECK_THROWS_WITH_AS(MeanFwdOp(std::int64_t{2})(Tensor::zeros({4, 2}, DType::float32)),
                       doctest::Contains("every axis in dim must lie within the rank of x"), ValueError);
  CHECK_THROWS_WITH_AS(MeanFwdOp(std::vector<std::int64_t>{0, -2})(Tensor::zeros({4, 2}, DType::float32)),
                       doctest::Contains("dim must not name an axis twice"), ValueError);
}

TEST_CASE("Mean's cpu kernel matches the reference over rows, packed and blocked columns and split axes") {
  struct Case {
    Shape shape;
    std::int64_t dim;
  };
  // Rows (the last axis), packed columns (inner up to 256), column blocks (inner above 256), a
  // long row split over threads, and a few long columns split the same way.
  const Case cases[] = {{{37, 101}, -1}, {{64, 48}, 0}, {{9, 7, 5}, 1}, {{40, 4099}, 0}, {{1, 1 << 19}, -1},
                        {{1 << 16, 3}, 0}};
  for (const Case& c : cases) {
    for (DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::float64}) {
      CAPTURE(c.shape);
      CAPTURE(dtype_name(dtype));
      const Tensor x = random(c.shape, dtype, 3);
      MeanFwdOp fast(c.dim), reference(c.dim, false, std::nullopt, kReference);
      const Tensor got = fast(x);
      REQUIRE(fast.last_call()->kernels.size() == 1);
      CHECK(fast.last_call()->kernels[0] == "cpu_mean");
      const testing::Comparison cmp = testing::compare(got, reference(x));
      CHECK_MESSAGE(cmp.ok, "max rel " << cmp.max_rel);
    }
  }
}
