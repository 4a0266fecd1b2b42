// Sizes from outside data through the ops' C++ API: an output shape the signature solves is
// checked before anything is allocated or run, on every target.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/alibi_slope.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/softmax.hpp"

using namespace tileops;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// The targets every op call here goes through: the in-tree dispatch (the cpu plugin's kernels
// when it is loaded) and the reference kernels.
const Target kTargets[] = {Target(), std::string(BUILTIN), std::string(REFERENCE)};

}  // namespace

TEST_CASE("GEMM whose output element count overflows fails at the call check, naming output 'd'") {
  // a = [M, K], b = [N, K] with K = 0 are empty and valid; d = [M, N] would hold 2^64 + 2^32
  // elements, which unchecked arithmetic wrapped to 2^32 and the kernel then overran.
  const Tensor a = Tensor::empty({4294967297, 0}, DType::float32);
  const Tensor b = Tensor::empty({4294967296, 0}, DType::float32);
  for (const Target& target : kTargets) {
    GemmFwdOp gemm(false, true, target);
    CHECK_THROWS_WITH_AS(gemm(a, b),
                         doctest::Contains("GemmFwdOp: output 'd' [M, N] has shape [4294967297, 4294967296]: the "
                                           "product of its extents exceeds 9223372036854775807"),
                         ValueError);
    CHECK_FALSE(gemm.serving_target().has_value());  // the call never reached target selection
    const Tensor small = gemm(Tensor::zeros({2, 3}, DType::float32), Tensor::zeros({5, 3}, DType::float32));
    CHECK(small.shape() == Shape{2, 5});  // and the op stays usable
  }
}

TEST_CASE("AlibiFwdOp with num_heads = INT64_MAX fails fast with a ValueError instead of looping") {
  for (const Target& target : kTargets) {
    for (const std::int64_t seq_len : {std::int64_t{1}, std::int64_t{2}}) {
      AlibiFwdOp alibi(seq_len, kMax, DType::float32, Device::cpu(), target);
      const auto start = std::chrono::steady_clock::now();
      CHECK_THROWS_WITH_AS(alibi(), doctest::Contains("AlibiFwdOp: output 'output' [num_heads, seq_len, seq_len] has shape"),
                           ValueError);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
  }
  AlibiFwdOp small(3, 5, DType::float32, Device::cpu());
  CHECK(small().shape() == Shape{5, 3, 3});
}

TEST_CASE("alibi_slope terminates for every head count, the largest included") {
  // The power-of-two search doubled past INT64_MAX and looped forever.
  CHECK(alibi_slope(0, kMax) > 0.0);
  CHECK(alibi_slope(kMax - 1, kMax) > 0.0);
  CHECK(alibi_slope(0, 1) == doctest::Approx(1.0 / 256));
  CHECK(alibi_slope(4, 6) == doctest::Approx(alibi_slope(0, 8)));  // beyond the power of two: every other slope of 8
}

TEST_CASE("Softmax and Sum over a tensor with a zero extent and large other extents run as empty writes") {
  // [2^40, 0, 2^40] spans 2^80 elements once the zero is counted as one: no tensor of that
  // shape exists, so the op never sees row counts that wrap.
  CHECK_THROWS_AS(Tensor::empty({std::int64_t{1} << 40, 0, std::int64_t{1} << 40}, DType::float32), ValueError);
  const Tensor x = Tensor::empty({std::int64_t{1} << 20, 0, std::int64_t{1} << 20}, DType::float32);
  for (const Target& target : kTargets) {
    SoftmaxFwdOp softmax(0, target);
    CHECK(softmax(x).shape() == x.shape());
    SumFwdOp sum(std::int64_t{0}, false, std::nullopt, target);
    CHECK(sum(x).shape() == Shape{0, std::int64_t{1} << 20});
  }
}
