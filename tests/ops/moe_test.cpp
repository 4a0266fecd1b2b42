// The mixture-of-experts ops (manifests/moe.yaml): the router's choice and weights (softmax and
// sigmoid scores, the selection bias, renormalisation, the scale, ties), the experts against
// values computed here, ids outside the experts refused on the host, FusedMoE as its two stages,
// the shared expert, and the construction rules FusedMoE demonstrates: the injected parameters
// its class lists, and `activation` decided by injected experts before the base checks it. Its
// workload rows run in numerics_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/moe.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);

std::vector<double> uniform(std::size_t n, unsigned seed, double low = -1.0, double high = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> values(n);
  for (double& v : values) v = dist(rng);
  return values;
}

Tensor random(const Shape& shape, DType dtype, unsigned seed, double scale = 1.0) {
  std::vector<double> values = uniform(static_cast<std::size_t>(shape_numel(shape)), seed);
  for (double& v : values) v *= scale;
  return Tensor::from_doubles(values, shape, dtype);
}

double silu(double v) { return v / (1.0 + std::exp(-v)); }
double gelu(double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }

// y[m] = sum_k w[m, k] * down_e(act(gate_e x) * up_e x), straight from the definition.
std::vector<double> experts_by_definition(const Tensor& x, const Tensor& weights, const Tensor& ids,
                                          const Tensor& w_gate_up, const Tensor& w_down, bool use_gelu) {
  const std::int64_t rows = x.shape()[0], hidden = x.shape()[1], k = ids.shape()[1], inter = w_down.shape()[2];
  const std::vector<double> xs = x.to_doubles(), ws = weights.to_doubles(), es = ids.to_doubles();
  const std::vector<double> gu = w_gate_up.to_doubles(), dn = w_down.to_doubles();
  std::vector<double> y(static_cast<std::size_t>(rows * hidden), 0.0);
  for (std::int64_t m = 0; m < rows; ++m) {
    for (std::int64_t j = 0; j < k; ++j) {
      const auto e = static_cast<std::int64_t>(es[m * k + j]);
      std::vector<double> a(static_cast<std::size_t>(inter));
      for (std::int64_t i = 0; i < inter; ++i) {
        double g = 0, u = 0;
        for (std::int64_t h = 0; h < hidden; ++h) {
          g += gu[(e * 2 * inter + i) * hidden + h] * xs[m * hidden + h];
          u += gu[(e * 2 * inter + inter + i) * hidden + h] * xs[m * hidden + h];
        }
        a[i] = (use_gelu ? gelu(g) : silu(g)) * u;
      }
      for (std::int64_t h = 0; h < hidden; ++h) {
        double d = 0;
        for (std::int64_t i = 0; i < inter; ++i) d += dn[(e * hidden + h) * inter + i] * a[i];
        y[m * hidden + h] += ws[m * k + j] * d;
      }
    }
  }
  return y;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

}  // namespace

TEST_CASE("MoERoute picks the top_k softmax scores, larger first, and renormalises and scales them") {
  // Row 0 logits 0, ln 2, ln 3 (softmax 1/6, 2/6, 3/6); row 1 ties experts 0 and 2.
  const Tensor logits = Tensor::from_doubles(std::vector<double>{0, std::log(2.0), std::log(3.0), 1, 0, 1}, {2, 3},
                                             DType::float32);
  for (const Target& target : {Target(), kReference}) {
    CAPTURE(target.value_or("default"));
    const auto [w, ids] = MoERouteFwdOp(2, "softmax", false, 1.0, target)(logits);
    CHECK(ids.dtype() == DType::int32);
    CHECK(ids.to_doubles() == std::vector<double>{2, 1, 0, 2});
    check_close(w.to_doubles(), {0.5, 1.0 / 3, std::exp(1.0) / (2 * std::exp(1.0) + 1), std::exp(1.0) / (2 * std::exp(1.0) + 1)}, 1e-6);
    const auto [wn, idn] = MoERouteFwdOp(2, "softmax", true, 2.0, target)(logits);
    check_close(wn.to_doubles(), {2 * 0.6, 2 * 0.4, 1.0, 1.0}, 1e-6);
  }
}

TEST_CASE("MoERoute with sigmoid scores chooses by score plus correction_bias and weighs by the unbiased score") {
  const Tensor logits = Tensor::from_doubles(std::vector<double>{2, 0, -1, 1}, {1, 4}, DType::bfloat16);
  // The bias lifts expert 2 above expert 3 (and 0); the weights stay the sigmoid scores.
  const Tensor bias = Tensor::from_doubles(std::vector<double>{0, 0, 1, 0}, {4}, DType::float32);
  const auto s = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (const Target& target : {Target(), kReference}) {
    const auto [w, ids] = MoERouteFwdOp(2, "sigmoid", true, 2.5, target)(logits, bias);
    CHECK(ids.to_doubles() == std::vector<double>{2, 0});
    const double sum = s(-1) + s(2);
    check_close(w.to_doubles(), {2.5 * s(-1) / sum, 2.5 * s(2) / sum}, 1e-6);
  }
}

TEST_CASE("MoERoute on the host is served by cpu_moe_route, which picks and weighs like the reference for 3 to 256 experts") {
  for (const std::int64_t experts : {3, 8, 64, 256}) {
    for (const bool sigmoid : {false, true}) {
      for (const DType dtype : {DType::float32, DType::bfloat16}) {
        CAPTURE(experts);
        CAPTURE(sigmoid);
        CAPTURE(dtype_name(dtype));
        const std::int64_t k = std::min<std::int64_t>(6, experts);
        const Tensor logits = random({33, experts}, dtype, 11, 4.0);
        const Tensor bias = sigmoid ? random({experts}, DType::float32, 12, 0.1) : Tensor();
        const char* scoring = sigmoid ? "sigmoid" : "softmax";
        MoERouteFwdOp fast(k, scoring, sigmoid, 2.5);
        const auto [w, ids] = fast(logits, bias);
        REQUIRE(fast.last_call()->kernels.size() == 1);
        CHECK(fast.last_call()->kernels[0] == "cpu_moe_route");
        const auto [w_ref, ids_ref] = MoERouteFwdOp(k, scoring, sigmoid, 2.5, kReference)(logits, bias);
        CHECK(ids.to_doubles() == ids_ref.to_doubles());
        check_close(w.to_doubles(), w_ref.to_doubles(), 1e-5);
      }
    }
  }
  // A NaN logit's sigmoid score is NaN: it comes after every number.
  const Tensor with_nan = Tensor::from_doubles(std::vector<double>{1, std::nan(""), 3, 2}, {1, 4}, DType::float32);
  const auto [nan_weights, nan_ids] = MoERouteFwdOp(3, "sigmoid")(with_nan);
  CHECK(nan_ids.to_doubles() == std::vector<double>{2, 3, 0});
}

TEST_CASE("MoERoute refuses top_k outside 1..E, an unknown scoring_func, and a bias with softmax scores") {
  const Tensor logits = Tensor::zeros({2, 4}, DType::float32);
  CHECK_THROWS_WITH_AS(MoERouteFwdOp(5)(logits), doctest::Contains("top_k must be from 1 to the number of experts E"),
                       ValueError);
  CHECK_THROWS_WITH_AS(MoERouteFwdOp(0)(logits), doctest::Contains("top_k must be from 1"), ValueError);
  CHECK_THROWS_WITH_AS(MoERouteFwdOp(2, "relu")(logits), doctest::Contains("scoring_func must be 'softmax' or 'sigmoid'"),
                       ValueError);
  CHECK_THROWS_WITH_AS(MoERouteFwdOp(2)(logits, Tensor::zeros({4}, DType::float32)),
                       doctest::Contains("correction_bias is added to sigmoid scores only"), ValueError);
}

TEST_CASE("MoEExperts sums each token's experts' gated MLPs weighted by the routing weights") {
  const std::int64_t rows = 5, hidden = 12, inter = 6, experts = 4, k = 2;
  const Tensor x = random({rows, hidden}, DType::float32, 1);
  const Tensor w_gate_up = random({experts, 2 * inter, hidden}, DType::float32, 2, 0.5);
  const Tensor w_down = random({experts, hidden, inter}, DType::float32, 3, 0.5);
  const Tensor weights = random({rows, k}, DType::float32, 4);
  const Tensor ids = Tensor::from_doubles(std::vector<double>{0, 3, 1, 2, 3, 0, 2, 2, 1, 0}, {rows, k}, DType::int32);
  for (const char* activation : {"silu_and_mul", "gelu_and_mul"}) {
    CAPTURE(activation);
    const std::vector<double> want =
        experts_by_definition(x, weights, ids, w_gate_up, w_down, std::string(activation) == "gelu_and_mul");
    for (const Target& target : {Target(), kReference}) {
      const Tensor y = MoEExpertsFwdOp(activation, target)(x, weights, ids, w_gate_up, w_down);
      CHECK(y.shape() == Shape{rows, hidden});
      check_close(y.to_doubles(), want, 1e-5);
    }
  }
  MoEExpertsFwdOp on_host;
  const Tensor y16 = on_host(x.to(DType::bfloat16), weights, ids, w_gate_up.to(DType::bfloat16),
                             w_down.to(DType::bfloat16));
  REQUIRE(on_host.last_call()->kernels.size() == 1);
  CHECK(on_host.last_call()->kernels[0] == "cpu_moe_experts");
  CHECK(y16.dtype() == DType::bfloat16);
  check_close(y16.to_doubles(),
              experts_by_definition(x.to(DType::bfloat16), weights, ids, w_gate_up.to(DType::bfloat16),
                                    w_down.to(DType::bfloat16), false),
              2e-2);
}

TEST_CASE("MoEExperts refuses an expert id outside the experts with ValueError naming it, before reading weights") {
  const Tensor x = random({3, 8}, DType::float32, 5);
  const Tensor w_gate_up = random({4, 8, 8}, DType::float32, 6);
  const Tensor w_down = random({4, 8, 4}, DType::float32, 7);
  const Tensor weights = random({3, 2}, DType::float32, 8);
  for (double bad : {4.0, -1.0}) {
    const Tensor ids = Tensor::from_doubles(std::vector<double>{0, 1, 2, 3, bad, 0}, {3, 2}, DType::int32);
    MoEExpertsFwdOp op;
    CHECK_THROWS_WITH_AS(op(x, weights, ids, w_gate_up, w_down),
                         doctest::Contains(("topk_ids[2, 0] = " + std::to_string(static_cast<int>(bad)) +
                                            " is outside the experts: expected 0 to 3 (experts E = 4")
                                               .c_str()),
                         ValueError);
    CHECK_THROWS_WITH_AS(op.last_call(), doctest::Contains("no call has completed yet"), RuntimeError);
  }
  CHECK_THROWS_WITH_AS(MoEExpertsFwdOp("relu_and_mul")(x, weights, Tensor::zeros({3, 2}, DType::int32), w_gate_up, w_down),
                       doctest::Contains("activation must be 'silu_and_mul' or 'gelu_and_mul'"), ValueError);
}

TEST_CASE("FusedMoE is its router followed by its experts") {
  const std::int64_t rows = 6, hidden = 16, inter = 8, experts = 8;
  const Tensor x = random({rows, hidden}, DType::float32, 11);
  const Tensor logits = random({rows, experts}, DType::float32, 12, 3.0);
  const Tensor w_gate_up = random({experts, 2 * inter, hidden}, DType::float32, 13, 0.5);
  const Tensor w_down = random({experts, hidden, inter}, DType::float32, 14, 0.5);
  const Tensor bias = random({experts}, DType::float32, 15, 0.1);
  for (const Target& target : {Target(), kReference}) {
    const Tensor y = FusedMoEFwdOp(3, "sigmoid", true, 2.0, "silu_and_mul", target)(x, logits, w_gate_up, w_down, bias);
    const auto [w, ids] = MoERouteFwdOp(3, "sigmoid", true, 2.0, target)(logits, bias);
    check_close(y.to_doubles(), experts_by_definition(x, w, ids, w_gate_up, w_down, false), 1e-5);
  }
}

TEST_CASE("FusedMoESharedExpert adds a shared SwiGLU expert over every token to the routed output") {
  const std::int64_t rows = 4, hidden = 8, inter = 4, shared_inter = 6, experts = 4;
  const Tensor x = random({rows, hidden}, DType::float32, 21);
  const Tensor logits = random({rows, experts}, DType::float32, 22, 2.0);
  const Tensor w_gate_up = random({experts, 2 * inter, hidden}, DType::float32, 23, 0.5);
  const Tensor w_down = random({experts, hidden, inter}, DType::float32, 24, 0.5);
  const Tensor s_gate_up = random({2 * shared_inter, hidden}, DType::float32, 25, 0.5);
  const Tensor s_down = random({hidden, shared_inter}, DType::float32, 26, 0.5);
  const Tensor y = FusedMoESharedExpertFwdOp(2)(x, logits, w_gate_up, w_down, s_gate_up, s_down);
  const Tensor routed = FusedMoEFwdOp(2)(x, logits, w_gate_up, w_down);
  // The shared expert is an expert every token takes with weight 1.
  const Tensor one = Tensor::from_doubles(std::vector<double>(rows, 1.0), {rows, 1}, DType::float32);
  const Tensor zero = Tensor::zeros({rows, 1}, DType::int32);
  const std::vector<double> shared = experts_by_definition(x, one, zero, s_gate_up.view({1, 2 * shared_inter, hidden}),
                                                           s_down.view({1, hidden, shared_inter}), false);
  std::vector<double> want = routed.to_doubles();
  for (std::size_t i = 0; i < want.size(); ++i) want[i] += shared[i];
  check_close(y.to_doubles(), want, 1e-5);
}

TEST_CASE("construction rule: FusedMoE accepts as injected parameters exactly the stages its class lists") {
  CHECK(FusedMoEFwdOp::op_class().injected_parameters() == std::vector<std::string>{"route", "experts"});
  CHECK(FusedMoESharedExpertFwdOp::op_class().injected_parameters() ==
        std::vector<std::string>{"route", "experts", "shared", "add"});
  CHECK(MoEExpertsFwdOp::op_class().injected_parameters().empty());
  // An injected experts instance is the one the op calls, keeping its own target.
  auto experts = std::make_shared<MoEExpertsFwdOp>("silu_and_mul", kReference);
  FusedMoEFwdOp op(2, "softmax", false, 1.0, "silu_and_mul", Target(), nullptr, experts);
  CHECK_THROWS_AS(experts->last_call(), RuntimeError);
  op(random({2, 8}, DType::float32, 31), random({2, 4}, DType::float32, 32), random({4, 8, 8}, DType::float32, 33),
     random({4, 8, 4}, DType::float32, 34));
  CHECK(experts->last_call() != nullptr);
}

TEST_CASE("construction rule: injected experts decide the activation before the base constructor checks it") {
  auto gelu_experts = std::make_shared<MoEExpertsFwdOp>("gelu_and_mul");
  // The caller leaves the default (silu_and_mul); the experts' own activation is what the op holds.
  const FusedMoEFwdOp op(2, "softmax", false, 1.0, "silu_and_mul", Target(), nullptr, gelu_experts);
  CHECK(op.activation() == "gelu_and_mul");
  CHECK(std::get<std::string>(op.params().at("activation")) == "gelu_and_mul");
  CHECK(FusedMoEFwdOp(2).activation() == "silu_and_mul");
  // The base constructor's check sees the decided value: the shared-expert op, whose shared
  // SwiGLU needs silu_and_mul, refuses gelu experts although its caller passed silu_and_mul.
  CHECK_THROWS_WITH_AS(FusedMoESharedExpertFwdOp(2, "softmax", false, 1.0, "silu_and_mul", Target(), nullptr,
                                                 gelu_experts),
                       doctest::Contains("the shared expert is a SwiGLU MLP: activation must be 'silu_and_mul' "
                                         "(activation = 'gelu_and_mul')"),
                       ValueError);
}
