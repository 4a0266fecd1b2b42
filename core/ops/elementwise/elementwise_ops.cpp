#include <cmath>

#include "tileops/errors.hpp"
#include "tileops/extend/alibi_slope.hpp"
#include "tileops/extend/ops/elementwise.hpp"
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

OpOutputs SiluAndMulFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  ops::SiluAndMulFwdOp::SiluAndMul::Call call;
  call.device = x.device();
  call.dtype = x.dtype();
  return outputs_of(kernel_for<ops::SiluAndMulFwdOp::SiluAndMul>(call).forward(x));
}

OpOutputs AddFwdOp::forward(const CallArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  const Shape shape = a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape());
  using Add = ops::AddFwdOp::Add;
  Add::Call call;
  call.device = a.device();
  call.dtype = a.dtype();
  const bool a_full = a.shape() == shape && a.is_contiguous();
  if (a_full && b.shape() == shape && b.is_contiguous()) {
    call.kind = Add::BroadcastKind::same_shape;
  } else if (a_full && !shape.empty() && b.is_contiguous() && shape_numel(b.shape()) == shape.back() &&
             (b.shape().empty() || b.shape().back() == shape.back())) {
    call.kind = Add::BroadcastKind::row;
  } else {
    call.kind = Add::BroadcastKind::general;
  }
  // A caller's `out` that is not contiguous is computed into a temporary and copied back.
  const double alpha_value = std::visit([](auto v) { return static_cast<double>(v); }, alpha());
  Add& kernel = kernel_for<Add>(call);
  if (args.out.defined() && args.out.is_contiguous()) {
    kernel.forward(a, b, alpha_value, args.out);
    return outputs_of(args.out);
  }
  Tensor out = Tensor::empty(shape, call.dtype, call.device.value());
  kernel.forward(a, b, alpha_value, out);
  if (args.out.defined()) {
    args.out.copy_from(out);
    return outputs_of(args.out);
  }
  return outputs_of(std::move(out));
}

OpOutputs ReluFwdOp::forward(const CallArgs& args) {
  const Tensor& input = args.inputs[0];
  ops::ReluFwdOp::Relu::Call call;
  call.device = input.device();
  call.dtype = input.dtype();
  auto& kernel = kernel_for<ops::ReluFwdOp::Relu>(call);
  const Tensor x = input.contiguous();
  if (!inplace()) {
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    kernel.forward(x, out);
    return outputs_of(out);
  }
  // In place on a strided input: compute contiguously, then write back into the input.
  kernel.forward(x, x);
  if (!x.is_same(input)) input.copy_from(x);
  return outputs_of(input);
}

OpOutputs GeluFwdOp::forward(const CallArgs& args) {
  using Gelu = ops::GeluFwdOp::Gelu;
  const Tensor x = args.inputs[0].contiguous();
  Gelu::Call call;
  call.device = x.device();
  call.dtype = x.dtype();
  call.approximate = approximate() == "tanh" ? Gelu::Approximation::tanh : Gelu::Approximation::none;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  kernel_for<Gelu>(call).forward(x, y);
  return outputs_of(y);
}

OpOutputs GeluAndMulFwdOp::forward(const CallArgs& args) {
  using GeluAndMul = ops::GeluAndMulFwdOp::GeluAndMul;
  const Tensor x = args.inputs[0].contiguous();
  GeluAndMul::Call call;
  call.device = x.device();
  call.dtype = x.dtype();
  call.approximate = approximate() == "tanh" ? GeluAndMul::Approximation::tanh : GeluAndMul::Approximation::none;
  return outputs_of(kernel_for<GeluAndMul>(call).forward(x));
}

OpOutputs AlibiFwdOp::forward(const CallArgs&) {
  ops::AlibiFwdOp::Alibi::Call call;
  call.device = device();  // unset: kernel_for fills in the accelerator's current device
  call.num_heads = num_heads();
  call.seq_len = seq_len();
  call.dtype = out_dtype();
  return outputs_of(kernel_for<ops::AlibiFwdOp::Alibi>(call).forward());
}

}  // namespace tileops
