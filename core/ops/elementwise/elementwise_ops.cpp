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
  const double alpha_value = std::visit([](auto v) { return static_cast<double>(v); }, alpha());
  AddFwdInterface& kernel = kernel_for<AddFwdInterface>("add", call);
  if (args.out.defined() && args.out.is_contiguous()) {
    kernel.forward(a, b, alpha_value, args.out);
    return {args.out};
  }
  Tensor out = Tensor::empty(shape, call.dtype, call.device.value());
  kernel.forward(a, b, alpha_value, out);
  if (args.out.defined()) {
    args.out.copy_from(out);
    return {args.out};
  }
  return {std::move(out)};
}

const OpClass& ReluFwdOp::op_class() {
  static const OpClass cls = OpClass::define("ReluFwdOp")
                                 .interface<ReluFwdInterface>("relu")
                                 .kernel_type<ref::ReluKernel>("relu_reference")
                                 .build();
  return cls;
}

OpOutputs ReluFwdOp::forward(const CallArgs& args) {
  const Tensor& input = args.inputs[0];
  ElementwiseCall call;
  call.device = input.device();
  call.dtype = input.dtype();
  auto& kernel = kernel_for<ReluFwdInterface>("relu", call);
  const Tensor x = input.contiguous();
  if (!inplace()) {
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

OpOutputs AlibiFwdOp::forward(const CallArgs&) {
  AlibiCall call;
  call.device = device();  // unset: kernel_for fills in the accelerator's current device
  call.num_heads = num_heads();
  call.seq_len = seq_len();
  call.dtype = out_dtype();
  return {kernel_for<AlibiFwdInterface>("alibi", call).forward()};
}

}  // namespace tileops
