// RopeFwdOp and RopeInterleavedFwdOp (manifests/rope.yaml): both forms in both layouts against
// values computed here, the positions input, the family's parameters and defaults, and the
// manifest's shape rules; the cpu plugin's kernels of the family against the reference. Their
// workload rows run in numerics_test.cpp with every other op of the catalogue.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/ops/rope.hpp"
#include "tileops/target.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

// x [1, S, 1, 4] (one head of 4, theta 10000): position s turns pair 0 by s and pair 1 by
// s / 100. The rotate-half form pairs the elements (0, 2) and (1, 3), the interleaved form
// (0, 1) and (2, 3).
std::vector<double> expected(const std::vector<double>& x, const std::vector<double>& positions, bool interleaved) {
  std::vector<double> y(x.size());
  for (std::size_t s = 0; s < positions.size(); ++s) {
    const double* in = &x[s * 4];
    double* out = &y[s * 4];
    for (int i = 0; i < 2; ++i) {
      const double angle = positions[s] * std::pow(10000.0, -2.0 * i / 4.0);
      const int a = interleaved ? 2 * i : i;
      const int b = interleaved ? 2 * i + 1 : i + 2;
      out[a] = in[a] * std::cos(angle) - in[b] * std::sin(angle);
      out[b] = in[b] * std::cos(angle) + in[a] * std::sin(angle);
    }
  }
  return y;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
}

// [B, S, H, D] values as [B, H, S, D].
std::vector<double> heads_first(const std::vector<double>& x, int b, int s, int h, int d) {
  std::vector<double> out(x.size());
  for (int bi = 0; bi < b; ++bi)
    for (int si = 0; si < s; ++si)
      for (int hi = 0; hi < h; ++hi)
        for (int di = 0; di < d; ++di) out[((bi * h + hi) * s + si) * d + di] = x[((bi * s + si) * h + hi) * d + di];
  return out;
}

const std::vector<double> kX{1, 2, 3, 4, 1, 2, 3, 4, -1, 0.5, 2, -3};

}  // namespace

TEST_CASE("RoPE rotates each half-pair by position times theta^(-2i/D), without positions, s is the position") {
  RopeFwdOp op;
  CHECK(op.theta() == 10000.0);
  CHECK(op.input_layout() == "BSHD");
  const Tensor y = op(Tensor::from_doubles(kX, {1, 3, 1, 4}, DType::float32));
  check_near(y.to_doubles(), expected(kX, {0, 1, 2}, false));
}

TEST_CASE("RoPE takes the positions input as the position of each sequence index") {
  const std::vector<double> x{1, 2, 3, 4, -1, 0.5, 2, -3};
  RopeFwdOp op;
  const Tensor positions = Tensor::from_doubles(std::vector<double>{7, 4096}, {2}, DType::int64);
  const Tensor y = op(Tensor::from_doubles(x, {1, 2, 1, 4}, DType::float32), positions);
  check_near(y.to_doubles(), expected(x, {7, 4096}, false));
}

TEST_CASE("RoPE interleaved rotates the adjacent pairs (2i, 2i + 1) by the same angles") {
  RopeInterleavedFwdOp op;
  const Tensor y = op(Tensor::from_doubles(kX, {1, 3, 1, 4}, DType::float32));
  check_near(y.to_doubles(), expected(kX, {0, 1, 2}, true));
  const Tensor positions = Tensor::from_doubles(std::vector<double>{5, 0, 300}, {3}, DType::int64);
  check_near(op(Tensor::from_doubles(kX, {1, 3, 1, 4}, DType::float32), positions).to_doubles(),
             expected(kX, {5, 0, 300}, true));
}

TEST_CASE("RoPE input_layout BHSD reads the sequence from axis 2, in both forms") {
  // Two heads of the same three positions: [1, 3, 2, 4] in BSHD.
  std::vector<double> bshd;
  for (int s = 0; s < 3; ++s) {
    for (int h = 0; h < 2; ++h) {
      for (int d = 0; d < 4; ++d) bshd.push_back(kX[static_cast<std::size_t>(s * 4 + d)] * (h + 1));
    }
  }
  const Tensor positions = Tensor::from_doubles(std::vector<double>{3, 1, 9}, {3}, DType::int64);
  for (const bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    // Each head rotated alone ([1, 3, 1, 4]), then laid out as [1, 3, 2, 4].
    std::vector<double> rotated[2];
    for (int h = 0; h < 2; ++h) {
      std::vector<double> head;
      for (int s = 0; s < 3; ++s)
        for (int d = 0; d < 4; ++d) head.push_back(bshd[static_cast<std::size_t>((s * 2 + h) * 4 + d)]);
      rotated[h] = expected(head, {3, 1, 9}, interleaved);
    }
    std::vector<double> want_bshd;
    for (int s = 0; s < 3; ++s)
      for (int h = 0; h < 2; ++h)
        for (int d = 0; d < 4; ++d) want_bshd.push_back(rotated[h][static_cast<std::size_t>(s * 4 + d)]);
    const Tensor x = Tensor::from_doubles(heads_first(bshd, 1, 3, 2, 4), {1, 2, 3, 4}, DType::float32);
    const Tensor y = interleaved ? RopeInterleavedFwdOp(10000.0, "BHSD")(x, positions) : RopeFwdOp(10000.0, "BHSD")(x, positions);
    check_near(y.to_doubles(), heads_first(want_bshd, 1, 3, 2, 4));
  }
}

TEST_CASE("RoPE checks the manifest's rules: an even head dimension, theta > 1, a known layout and one position per sequence index") {
  RopeFwdOp op;
  CHECK_THROWS_WITH_AS(op(Tensor::zeros({1, 2, 1, 3}, DType::float32)), doctest::Contains("D % 2 == 0"), ValueError);
  CHECK_THROWS_WITH_AS(RopeFwdOp(1.0), doctest::Contains("theta > 1"), ValueError);
  CHECK_THROWS_WITH_AS(RopeInterleavedFwdOp(10000.0, "SBHD"), doctest::Contains("input_layout"), TypeError);
  const Tensor three = Tensor::zeros({3}, DType::int64);
  CHECK_THROWS_WITH_AS(op(Tensor::zeros({1, 2, 3, 4}, DType::float32), three),
                       doctest::Contains("positions must hold one position per sequence index"), ValueError);
  CHECK_NOTHROW(RopeFwdOp(10000.0, "BHSD")(Tensor::zeros({1, 2, 3, 4}, DType::float32), three));
}

TEST_CASE("RoPE ops are in the catalogue with the family's defaults, and derive the family base") {
  for (const char* name : {"RopeFwdOp", "RopeInterleavedFwdOp"}) {
    CAPTURE(name);
    const auto op = find_op(name).make({}, {});
    CHECK(op->params().at("theta") == Value(10000.0));
    CHECK(op->params().at("input_layout") == Value(std::string("BSHD")));
    CHECK(dynamic_cast<const RopeFamilyOp*>(op.get()) != nullptr);
  }
}

TEST_CASE("The RoPE family on the host is served by the cpu kernels, which match the reference in both forms and layouts") {
  const Target reference = std::string(REFERENCE);
  const Tensor short_factor = testing::random_tensors({TensorSpec{Device::cpu(), DType::float32, Shape{8}}}, Device::cpu(), 3)
                                  .front();
  const Tensor long_factor = Tensor::from_doubles(std::vector<double>(8, 4.0), {8}, DType::float32);
  const Tensor positions = Tensor::from_doubles(std::vector<double>{7, 0, 300, 5, 1}, {5}, DType::int64);
  for (const char* layout : {"BSHD", "BHSD"}) {
    for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
      CAPTURE(layout);
      CAPTURE(dtype_name(dtype));
      const Tensor x = testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape{2, 5, 5, 16}}}, Device::cpu(), 4)
                           .front();
      const auto check = [&](Op& fast, Op& slow, const Tensor& p, const char* key) {
        CAPTURE(key);
        const std::vector<Tensor> inputs{x, p};
        const Tensor got = fast.call(CallArgs(inputs)).front();
        REQUIRE(fast.last_call()->kernels.size() == 1);
        CHECK(fast.last_call()->kernels[0] == key);
        const testing::Comparison cmp = testing::compare(got, slow.call(CallArgs(inputs)).front());
        CHECK_MESSAGE(cmp.ok, "max rel " << cmp.max_rel);
      };
      RopeFwdOp neox(500000.0, layout);
      RopeFwdOp neox_ref(500000.0, layout, reference);
      check(neox, neox_ref, positions, "cpu_rope");
      check(neox, neox_ref, Tensor(), "cpu_rope");
      RopeInterleavedFwdOp interleaved(10000.0, layout);
      RopeInterleavedFwdOp interleaved_ref(10000.0, layout, reference);
      check(interleaved, interleaved_ref, positions, "cpu_rope_interleaved");
      // Original context 8: positions up to 300 take the long factors, the bare sequence the short.
      LongRoPEFwdOp long_rope(10000.0, layout, 512, 8, short_factor, long_factor);
      LongRoPEFwdOp long_rope_ref(10000.0, layout, 512, 8, short_factor, long_factor, reference);
      check(long_rope, long_rope_ref, positions, "cpu_long_rope");
      check(long_rope, long_rope_ref, Tensor(), "cpu_long_rope");
    }
  }
}
