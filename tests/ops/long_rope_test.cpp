// LongRoPEFwdOp (manifests/rope.yaml): the factors chosen by sequence length, the attention
// scale, both layouts, against values computed here; the construction-time factor tensors
// checked at construction and present on the call device.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "support/host_runtime.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/ops/rope.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/ops/rope.hpp"

using namespace tileops;

namespace {

// D = 4, so two factors each; original context 4, extended to 16.
const std::vector<double> kShort{1.0, 2.0};
const std::vector<double> kLong{4.0, 8.0};
constexpr std::int64_t kOriginal = 4;
constexpr std::int64_t kMax = 16;

Tensor factors(const std::vector<double>& f) { return Tensor::from_doubles(f, {2}, DType::float32); }

LongRoPEFwdOp make_op(const char* layout = "BSHD") {
  return LongRoPEFwdOp(10000.0, layout, kMax, kOriginal, factors(kShort), factors(kLong));
}

// One head of x [1, S, 1, 4] at `positions`: pair i (elements i, i + 2) turns by
// p * 10000^(-i/2) / f[i], cos and sin times sqrt(1 + ln(16/4) / ln(4)) = sqrt(2).
std::vector<double> expected(const std::vector<double>& x, const std::vector<double>& positions,
                             const std::vector<double>& f) {
  const double scale = std::sqrt(1.0 + std::log(4.0) / std::log(4.0));
  std::vector<double> y(x.size());
  for (std::size_t s = 0; s < positions.size(); ++s) {
    for (int i = 0; i < 2; ++i) {
      const double angle = positions[s] * std::pow(10000.0, -i / 2.0) / f[static_cast<std::size_t>(i)];
      const double a = x[s * 4 + i];
      const double b = x[s * 4 + i + 2];
      y[s * 4 + i] = (a * std::cos(angle) - b * std::sin(angle)) * scale;
      y[s * 4 + i + 2] = (b * std::cos(angle) + a * std::sin(angle)) * scale;
    }
  }
  return y;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
}

std::vector<double> ramp_values(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
  return v;
}

}  // namespace

TEST_CASE("LongRoPE uses the short factors while the sequence fits the original context, scaled by Phi-3's attention factor") {
  const std::vector<double> x = ramp_values(4 * 4);
  LongRoPEFwdOp op = make_op();
  CHECK(op.theta() == 10000.0);
  CHECK(op.max_position_embeddings() == kMax);
  const Tensor y = op(Tensor::from_doubles(x, {1, 4, 1, 4}, DType::float32));
  check_near(y.to_doubles(), expected(x, {0, 1, 2, 3}, kShort));
}

TEST_CASE("LongRoPE uses the long factors once the sequence exceeds the original context") {
  const std::vector<double> x = ramp_values(5 * 4);
  LongRoPEFwdOp op = make_op();
  check_near(op(Tensor::from_doubles(x, {1, 5, 1, 4}, DType::float32)).to_doubles(), expected(x, {0, 1, 2, 3, 4}, kLong));
}

TEST_CASE("LongRoPE measures the sequence by its largest position when positions are given (a decode step)") {
  const std::vector<double> x = ramp_values(4);
  LongRoPEFwdOp op = make_op();
  const Tensor late = Tensor::from_doubles(std::vector<double>{9}, {1}, DType::int64);
  check_near(op(Tensor::from_doubles(x, {1, 1, 1, 4}, DType::float32), late).to_doubles(), expected(x, {9}, kLong));
  const Tensor early = Tensor::from_doubles(std::vector<double>{3}, {1}, DType::int64);
  check_near(op(Tensor::from_doubles(x, {1, 1, 1, 4}, DType::float32), early).to_doubles(), expected(x, {3}, kShort));
}

TEST_CASE("LongRoPE input_layout BHSD reads the sequence from axis 2") {
  // [1, 1 head, 5 positions, 4]: the same values as one head of BSHD.
  const std::vector<double> x = ramp_values(5 * 4);
  LongRoPEFwdOp op = make_op("BHSD");
  check_near(op(Tensor::from_doubles(x, {1, 1, 5, 4}, DType::float32)).to_doubles(), expected(x, {0, 1, 2, 3, 4}, kLong));
}

TEST_CASE("construction tensor checked at construction: a factor tensor of the wrong dtype is refused by the constructor, naming both dtypes") {
  const Tensor wrong = Tensor::from_doubles(kLong, {2}, DType::float16);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, kOriginal, factors(kShort), wrong),
                       doctest::Contains("long_factor"), TypeError);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, kOriginal, factors(kShort), wrong),
                       doctest::Contains("float16"), TypeError);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, kOriginal, factors(kShort), wrong),
                       doctest::Contains("float32"), TypeError);
}

TEST_CASE("construction tensor checked at construction: factor tensors of the wrong shape are refused by the constructor, naming the shapes") {
  const Tensor three = Tensor::from_doubles(std::vector<double>{1, 1, 1}, {3}, DType::float32);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, kOriginal, factors(kShort), three),
                       doctest::Contains("[3]"), ValueError);
  const Tensor matrix = Tensor::from_doubles(std::vector<double>{1, 1, 1, 1}, {2, 2}, DType::float32);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, kOriginal, matrix, factors(kLong)),
                       doctest::Contains("short_factor"), ValueError);
  // A head dimension the factors do not fit (2 * R) is refused at the call, which first sees x.
  LongRoPEFwdOp op = make_op();
  CHECK_THROWS_WITH_AS(op(Tensor::zeros({1, 2, 1, 6}, DType::float32)), doctest::Contains("2 * R"), ValueError);
}

TEST_CASE("LongRoPE checks its context lengths at construction") {
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", 2, kOriginal, factors(kShort), factors(kLong)),
                       doctest::Contains("at least original_max_position_embeddings"), ValueError);
  CHECK_THROWS_WITH_AS(LongRoPEFwdOp(10000.0, "BSHD", kMax, 1, factors(kShort), factors(kLong)),
                       doctest::Contains("must exceed 1"), ValueError);
}

namespace {

// LongRoPEFwdOp's kernel on rope_t devices: records the factors it was handed.
class FactorRecorder final : public Kernel, public ops::LongRoPEFwdOp::Rope {
 public:
  static constexpr DeviceTypes devices{"rope_t"};
  static inline std::vector<Tensor> seen;  // short, long, short, long, ...
  explicit FactorRecorder(const Call&) {}
  Tensor forward(const Tensor& x, const Tensor&, const Tensor& short_factor, const Tensor& long_factor) override {
    seen.push_back(short_factor);
    seen.push_back(long_factor);
    return Tensor::zeros(x.shape(), x.dtype(), x.device());
  }
};

}  // namespace

TEST_CASE("construction tensor present on the call device: the factors are copied to the call's device once, and the construction's value stays") {
  Registrar reg("rope_device_test");
  reg.register_device_runtime(std::make_shared<test::HostRuntime>("rope_t", 1, false));
  reg.register_kernel_type<FactorRecorder>("LongRoPEFwdOp", "rope_t_factor_recorder");
  FactorRecorder::seen.clear();
  const Tensor long_factor = factors(kLong);
  LongRoPEFwdOp op(10000.0, "BSHD", kMax, kOriginal, factors(kShort), long_factor);
  const Device device = Device::parse("rope_t:0");
  const Tensor x = Tensor::zeros({1, 5, 1, 4}, DType::float32).to(device);
  op(x);
  op(x);
  REQUIRE(FactorRecorder::seen.size() == 4);
  CHECK(FactorRecorder::seen[0].device() == device);
  CHECK(FactorRecorder::seen[1].device() == device);
  CHECK(FactorRecorder::seen[0].to_doubles() == kShort);
  CHECK(FactorRecorder::seen[1].to_doubles() == kLong);
  CHECK(FactorRecorder::seen[3].data_ptr() == FactorRecorder::seen[1].data_ptr());  // kept, not copied again
  CHECK(std::get<Tensor>(op.params().at("long_factor")).device() == Device::cpu());
  CHECK(std::get<Tensor>(op.params().at("long_factor")).data_ptr() == long_factor.data_ptr());
}

TEST_CASE("LongRoPE is in the catalogue and derives the RoPE family base") {
  const auto& entry = find_op("LongRoPEFwdOp");
  LongRoPEFwdOp op = make_op();
  CHECK(dynamic_cast<const RopeFamilyOp*>(static_cast<const Op*>(&op)) != nullptr);
  CHECK(entry.name == std::string("LongRoPEFwdOp"));
}
