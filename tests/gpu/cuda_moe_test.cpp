// The cuda plugin's mixture-of-experts kernels against the reference kernels on the host: the
// router over expert counts from 3 to 4096 with both scorings, the bias and renormalisation;
// the experts at widths no vector divides and at vector widths, groups longer than one pass of
// eight routes, experts no route picks, misaligned views; the tensor-core GEMMs of larger
// batches over partial tiles, on compute capability 9.0 both the Hopper kernel type's wgmma
// GEMMs and, with it disabled, the shared kernel type's mma.sync ones; FusedMoE end to end; and
// an expert id
// out of range in device memory, reported at the next synchronisation with its route left out.
#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <string>

#include "support/gpu.hpp"
#include "support/scoped_config.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/moe.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using testing::cuda_or_skip;

namespace {

const Device kGpu = Device::parse("cuda:0");
constexpr DType kFloats[] = {DType::float32, DType::float16, DType::bfloat16};

Tensor random(std::vector<std::int64_t> shape, DType dtype, unsigned seed) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu(), seed)
      .front();
}

Tensor random_ids(std::int64_t rows, std::int64_t k, std::int64_t experts, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, experts - 1);
  std::vector<double> ids(static_cast<std::size_t>(rows * k));
  for (double& id : ids) id = static_cast<double>(pick(rng));
  return Tensor::from_doubles(ids, {rows, k}, DType::int32);
}

// The same values one element past a 16-byte boundary: contiguous, but misaligned.
Tensor misaligned(const Tensor& t) {
  Tensor flat = Tensor::empty({t.numel() + 1}, t.dtype(), t.device());
  Tensor v = flat.as_strided(t.shape(), contiguous_strides(t.shape()), 1);
  v.copy_from(t);
  return v;
}

void check_outputs(const OpOutputs& got, const OpOutputs& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].device() == kGpu);
    const testing::Comparison c = testing::compare(got[i], want[i]);
    CHECK_MESSAGE(c.ok, "output " << i << ": max abs " << c.max_abs << ", max rel " << c.max_rel);
  }
}

std::vector<Tensor> to_gpu(const std::vector<Tensor>& ts, bool shift = false) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(!t.defined() ? t : shift ? misaligned(t.to(kGpu)) : t.to(kGpu));
  return out;
}

}  // namespace

TEST_CASE("GPU: the router picks and weighs like the reference for 3 to 4096 experts, both scorings, bias and renormalisation") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t experts : {3, 8, 64, 257, 4096}) {
      for (bool sigmoid : {false, true}) {
        const std::int64_t k = std::min<std::int64_t>(experts, 6);
        CAPTURE(dtype_name(dt));
        CAPTURE(experts);
        CAPTURE(sigmoid);
        const Tensor logits = random({33, experts}, dt, 3);
        const Tensor bias = sigmoid ? random({experts}, DType::float32, 4) : Tensor();
        const char* scoring = sigmoid ? "sigmoid" : "softmax";
        MoERouteFwdOp fast(k, scoring, sigmoid, 2.5);
        MoERouteFwdOp reference(k, scoring, sigmoid, 2.5, std::string(REFERENCE));
        const std::vector<Tensor> host{logits, bias};
        check_outputs(fast.call(CallArgs(to_gpu(host))), reference.call(CallArgs(host)));
      }
    }
  }
}

namespace {

// MoEExpertsFwdOp's shapes: rows, top_k, experts, hidden, intermediate.
struct ExpertShape {
  std::int64_t rows, k, experts, hidden, inter;
};

// The experts on cuda copies of random inputs of shape s (misaligned by one element when
// `shift`) against the reference on the host.
void check_experts(const ExpertShape& s, DType dt, const char* activation, bool shift) {
  CAPTURE(dtype_name(dt));
  CAPTURE(s.rows);
  CAPTURE(s.hidden);
  CAPTURE(activation);
  CAPTURE(shift);
  const std::vector<Tensor> host{random({s.rows, s.hidden}, dt, 1), random({s.rows, s.k}, DType::float32, 2),
                                 random_ids(s.rows, s.k, s.experts, 3), random({s.experts, 2 * s.inter, s.hidden}, dt, 4),
                                 random({s.experts, s.hidden, s.inter}, dt, 5)};
  MoEExpertsFwdOp fast(activation);
  MoEExpertsFwdOp reference(activation, std::string(REFERENCE));
  check_outputs(fast.call(CallArgs(to_gpu(host, shift))), reference.call(CallArgs(host)));
}

}  // namespace

TEST_CASE("GPU: the experts match the reference at odd and vector widths, long groups, idle experts and misaligned views") {
  if (cuda_or_skip() == nullptr) return;
  for (const ExpertShape s : {ExpertShape{1, 2, 8, 256, 96}, ExpertShape{40, 2, 4, 64, 32}, ExpertShape{7, 3, 16, 13, 7},
                              ExpertShape{3, 1, 64, 128, 40}, ExpertShape{19, 6, 64, 96, 24}}) {
    for (DType dt : kFloats) {
      for (const char* activation : {"silu_and_mul", "gelu_and_mul"}) {
        for (bool shift : {false, true}) check_experts(s, dt, activation, shift);
      }
    }
  }
}

namespace {

// At least four routes per expert, hidden and inter multiples of 64: the grouped GEMMs serve
// (on sm_80 and later). Groups of a few routes to a few hundred, so row tiles of 128 end part
// full; inter 320 and hidden 192 leave the last column tiles part full (64 of 128 gate/up
// columns, 192 of 256 down columns).
void check_tensor_core_shapes() {
  for (const ExpertShape s : {ExpertShape{300, 2, 8, 128, 192}, ExpertShape{700, 2, 4, 64, 320}, ExpertShape{64, 6, 64, 192, 64}}) {
    for (DType dt : {DType::bfloat16, DType::float16}) {
      for (const char* activation : {"silu_and_mul", "gelu_and_mul"}) check_experts(s, dt, activation, false);
    }
  }
}

// The kernel type that serves a call of MoEExpertsFwdOp in `dtype` at a tensor-core shape.
std::string experts_served_by(DType dtype) {
  const ExpertShape s{64, 2, 4, 64, 64};
  MoEExpertsFwdOp op;
  op(random({s.rows, s.hidden}, dtype, 1).to(kGpu), random({s.rows, s.k}, DType::float32, 2).to(kGpu),
     random_ids(s.rows, s.k, s.experts, 3).to(kGpu), random({s.experts, 2 * s.inter, s.hidden}, dtype, 4).to(kGpu),
     random({s.experts, s.hidden, s.inter}, dtype, 5).to(kGpu));
  REQUIRE(op.last_call()->kernels.size() == 1);
  return std::string(op.last_call()->kernels[0]);
}

}  // namespace

TEST_CASE("GPU: the experts' tensor-core GEMMs match the reference over partial row tiles, column tiles and both activations") {
  if (cuda_or_skip() == nullptr) return;
  check_tensor_core_shapes();
}

TEST_CASE("GPU: on compute capability 9.0 the Hopper experts kernel type serves 16-bit calls and float32 goes to the shared one, and with it disabled the mma.sync GEMMs match the reference") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  const bool hopper = rt->facts(0).arch == 90;
  CHECK(experts_served_by(DType::bfloat16) == (hopper ? "cuda_moe_experts_sm90" : "cuda_moe_experts"));
  CHECK(experts_served_by(DType::float32) == "cuda_moe_experts");

  Config without_hopper = config();
  without_hopper.disable_kernels = {"cuda_moe_experts_sm90"};
  test::ScopedConfig scoped(without_hopper);
  CHECK(experts_served_by(DType::float16) == "cuda_moe_experts");
  check_tensor_core_shapes();
}

TEST_CASE("GPU: FusedMoE and the shared-expert form match the reference end to end") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    CAPTURE(dtype_name(dt));
    const std::vector<Tensor> host{random({24, 64}, dt, 1), random({24, 16}, DType::float32, 2),
                                   random({16, 64, 64}, dt, 3), random({16, 64, 32}, dt, 4),
                                   random({16}, DType::float32, 5)};
    FusedMoEFwdOp fast(4, "sigmoid", true, 2.446);
    FusedMoEFwdOp reference(4, "sigmoid", true, 2.446, "silu_and_mul", std::string(REFERENCE));
    check_outputs(fast.call(CallArgs(to_gpu(host))), reference.call(CallArgs(host)));
    const std::vector<Tensor> shared{host[0], host[1], host[2],          host[3],
                                     random({48, 64}, dt, 6), random({64, 24}, dt, 7), Tensor()};
    FusedMoESharedExpertFwdOp fast_shared(6);
    FusedMoESharedExpertFwdOp reference_shared(6, "softmax", false, 1.0, "silu_and_mul", std::string(REFERENCE));
    check_outputs(fast_shared.call(CallArgs(to_gpu(shared))), reference_shared.call(CallArgs(shared)));
  }
}

TEST_CASE("GPU: an expert id out of range in device memory is reported at the next synchronisation, its route left out") {
  DeviceRuntime* gpu = cuda_or_skip();
  if (gpu == nullptr) return;
  const Tensor x = random({3, 16}, DType::float32, 1);
  const Tensor weights = random({3, 2}, DType::float32, 2);
  const Tensor w_gate_up = random({4, 16, 16}, DType::float32, 3);
  const Tensor w_down = random({4, 16, 8}, DType::float32, 4);
  const Tensor bad = Tensor::from_doubles(std::vector<double>{0, 1, 9, 2, 3, 3}, {3, 2}, DType::int32);
  MoEExpertsFwdOp op;
  const Tensor y = op(x.to(kGpu), weights.to(kGpu), bad.to(kGpu), w_gate_up.to(kGpu), w_down.to(kGpu));
  CHECK_THROWS_WITH_AS(gpu->synchronize(0),
                       doctest::Contains("cuda:0: an earlier call's kernel cuda_moe_experts read topk_ids[1, 0] = 9, "
                                         "outside [0, 3]; it read nothing through it and left that route out of "
                                         "token 1's sum"),
                       ValueError);
  // Token 1 is its second route alone: the same as a call whose first weight there is zero.
  std::vector<double> w = weights.to_doubles();
  w[2] = 0;
  const Tensor zeroed = Tensor::from_doubles(w, {3, 2}, DType::float32);
  const Tensor ids = Tensor::from_doubles(std::vector<double>{0, 1, 0, 2, 3, 3}, {3, 2}, DType::int32);
  const Tensor want = MoEExpertsFwdOp("silu_and_mul", std::string(REFERENCE))(x, zeroed, ids, w_gate_up, w_down);
  CHECK(testing::compare(y.to(Device::cpu()), want).ok);
}
