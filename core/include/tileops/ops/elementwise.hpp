// The elementwise ops: SiluAndMulFwdOp, AddFwdOp, ReluFwdOp, AlibiFwdOp.
#pragma once

#include <optional>
#include <variant>

#include "tileops/op.hpp"
#include "tileops/ops/elementwise_kernels.hpp"

namespace tileops {

// y = silu(x[:, :N]) * x[:, N:] for x [M, 2N].
class TILEOPS_API SiluAndMulFwdOp final : public Op {
 public:
  // Interface "silu_and_mul"; in-tree kernel "silu_and_mul_reference".
  static const OpClass& op_class();
  explicit SiluAndMulFwdOp(Target target = {});
  Tensor operator()(const Tensor& x);

 protected:
  OpOutputs forward(const CallArgs& args) override;
};

// output = a + alpha * b, broadcasting; writes `out` when given.
class TILEOPS_API AddFwdOp final : public Op {
 public:
  // Interface "add"; in-tree kernel "add_reference".
  static const OpClass& op_class();
  // alpha: an int or a float (a float alpha needs a floating dtype).
  explicit AddFwdOp(std::variant<std::int64_t, double> alpha = std::int64_t{1}, Target target = {});
  Tensor operator()(const Tensor& a, const Tensor& b, const Tensor& out = {});

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  double alpha_;
};

// output = max(input, 0); with inplace, writes input and returns it.
class TILEOPS_API ReluFwdOp final : public Op {
 public:
  // Interface "relu"; in-tree kernel "relu_reference".
  static const OpClass& op_class();
  explicit ReluFwdOp(bool inplace = false, Target target = {});
  Tensor operator()(const Tensor& input);
  bool inplace() const { return inplace_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  bool inplace_;
};

// The ALiBi bias [num_heads, seq_len, seq_len]; no tensor input.
class TILEOPS_API AlibiFwdOp final : public Op {
 public:
  // Interface "alibi"; in-tree kernel "alibi_reference".
  static const OpClass& op_class();
  // device: where the output goes; nullopt means the process accelerator's current device
  // (and the call cannot run in-tree kernels when the process has no accelerator).
  AlibiFwdOp(std::int64_t seq_len, std::int64_t num_heads, DType out_dtype = DType::float32,
             std::optional<Device> device = std::nullopt, Target target = {});
  Tensor operator()();

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::int64_t seq_len_;
  std::int64_t num_heads_;
  DType out_dtype_;
  std::optional<Device> device_;
};

}  // namespace tileops
