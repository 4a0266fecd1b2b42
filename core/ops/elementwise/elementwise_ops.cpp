#include <array>
#include <cmath>

#include "elementwise/reference_kernels.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/elementwise.hpp"

namespace tileops {

double alibi_slope(std::int64_t head, std::int64_t num_heads) {
  std::int64_t pow2 = 1;
  while (pow2 <= num_heads / 2) pow2 *= 2;  // pow2 * 2 <= num_heads, without overflow
  if (head < pow2) return std::pow(2.0, -8.0 * static_cast<double>(head + 1) / static_cast<double>(pow2));
  // Heads beyond the power of two take every other slope of the next power of two.
  // Computed in double: 2 * pow2 exceeds INT64_MAX when num_heads is at least 2^62.
  const auto extra = static_cast<double>(head - pow2);
  return std::pow(2.0, -8.0 * (2.0 * extra + 1.0) / (2.0 * static_cast<double>(pow2)));
}

const OpClass& SiluAndMulFwdOp::op_class() {
  static const OpClass cls = OpClass::define("SiluAndMulFwdOp")
                                 .interface<SiluAndMulFwdInterface>("silu_and_mul")
                                 .kernel_type<ref::SiluAndMulKernel>("silu_and_mul_reference")
                                 .build();
  return cls;
}

SiluAndMulFwdOp::SiluAndMulFwdOp(Target target) : Op(op_class(), {}, std::move(target)) {}

Tensor SiluAndMulFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs SiluAndMulFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  ElementwiseCall call;
  call.device = x.device();
  call.dtype = x.dtype();
  return {kernel_for<SiluAndMulFwdInterface>("silu_and_mul", call).forward(x)};
}

const OpClass& AddFwdOp::op_class() {
  static const OpClass cls = OpClass::define("AddFwdOp")
                                 .interface<AddFwdInterface>("add")
                                 .kernel_type<ref::AddKernel>("add_reference")
                                 .build();
  return cls;
}

AddFwdOp::AddFwdOp(std::variant<std::int64_t, double> alpha, Target target)
    : Op(op_class(), {{"alpha", std::visit([](auto v) { return Value(v); }, alpha)}}, std::move(target)),
      alpha_(std::visit([](auto v) { return static_cast<double>(v); }, alpha)) {}

Tensor AddFwdOp::operator()(const Tensor& a, const Tensor& b, const Tensor& out) {
  const std::array<Tensor, 2> inputs{a, b};
  return call(CallArgs(inputs, out)).front();
}

OpOutputs AddFwdOp::forward(const CallArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  const Shape shape = broadcast_shapes(a.shape(), b.shape());
  AddCall call;
  call.device = a.device();
  call.dtype = a.dtype();
  const bool a_full = a.shape() == shape && a.is_contiguous();
  if (a_full && b.shape() == shape && b.is_contiguous()) {
    call.kind = BroadcastKind::same_shape;
  } else if (a_full && !shape.empty() && b.is_contiguous() && shape_numel(b.shape()) == shape.back() &&
             (b.shape().empty() || b.shape().back() == shape.back())) {
    call.kind = BroadcastKind::row;
  } else {
    call.kind = BroadcastKind::general;
  }
  // A caller's `out` that is not contiguous is computed into a temporary and copied back.
  const bool direct = args.out.defined() && args.out.is_contiguous();
  const Tensor out = direct ? args.out : Tensor::empty(shape, call.dtype, call.device.value());
  kernel_for<AddFwdInterface>("add", call).forward(a, b, alpha_, out);
  if (args.out.defined() && !direct) {
    args.out.copy_from(out);
    return {args.out};
  }
  return {out};
}

const OpClass& ReluFwdOp::op_class() {
  static const OpClass cls = OpClass::define("ReluFwdOp")
                                 .interface<ReluFwdInterface>("relu")
                                 .kernel_type<ref::ReluKernel>("relu_reference")
                                 .build();
  return cls;
}

ReluFwdOp::ReluFwdOp(bool inplace, Target target)
    : Op(op_class(), {{"inplace", inplace}}, std::move(target)), inplace_(inplace) {}

Tensor ReluFwdOp::operator()(const Tensor& input) {
  const std::array<Tensor, 1> inputs{input};
  return call(CallArgs(inputs)).front();
}

OpOutputs ReluFwdOp::forward(const CallArgs& args) {
  const Tensor& input = args.inputs[0];
  ElementwiseCall call;
  call.device = input.device();
  call.dtype = input.dtype();
  auto& kernel = kernel_for<ReluFwdInterface>("relu", call);
  const Tensor x = input.contiguous();
  if (!inplace_) {
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    kernel.forward(x, out);
    return {out};
  }
  // In place on a strided input: compute contiguously, then write back into the input.
  kernel.forward(x, x);
  if (!x.is_same(input)) input.copy_from(x);
  return {input};
}

const OpClass& AlibiFwdOp::op_class() {
  static const OpClass cls = OpClass::define("AlibiFwdOp")
                                 .interface<AlibiFwdInterface>("alibi")
                                 .kernel_type<ref::AlibiKernel>("alibi_reference")
                                 .build();
  return cls;
}

AlibiFwdOp::AlibiFwdOp(std::int64_t seq_len, std::int64_t num_heads, DType out_dtype, std::optional<Device> device,
                       Target target)
    : Op(op_class(),
         {{"seq_len", seq_len},
          {"num_heads", num_heads},
          {"out_dtype", out_dtype},
          {"device", device ? Value(*device) : Value()}},
         std::move(target)),
      seq_len_(seq_len),
      num_heads_(num_heads),
      out_dtype_(out_dtype),
      device_(device) {}

Tensor AlibiFwdOp::operator()() { return call(CallArgs()).front(); }

OpOutputs AlibiFwdOp::forward(const CallArgs&) {
  AlibiCall call;
  call.device = device_;  // unset: kernel_for fills in the accelerator's current device
  call.num_heads = num_heads_;
  call.seq_len = seq_len_;
  call.dtype = out_dtype_;
  return {kernel_for<AlibiFwdInterface>("alibi", call).forward()};
}

}  // namespace tileops
