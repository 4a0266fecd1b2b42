#include "tileops/ops/pool.hpp"

#include "pool/pool_geometry.hpp"
#include "tileops/extend/ops/pool.hpp"

namespace tileops {
namespace {

// y for x [N, C, H, W] and the window: [N, C, H_out, W_out], the sizes the signature check
// has already found positive.
Tensor pooled_output(const Tensor& x, std::int64_t out_h, std::int64_t out_w) {
  return Tensor::empty({x.shape()[0], x.shape()[1], out_h, out_w}, x.dtype(), x.device());
}

}  // namespace

// The base constructor has checked the parameters' types and, through the manifest's let
// entries, that every list holds 2 values and the size rules (positive sizes, padding at most
// half the kernel) hold.
void MaxPool2dFwdOp::derive() {
  derived_.kernel_h = pool::per_dim(kernel_size(), 0, "kernel_size");
  derived_.kernel_w = pool::per_dim(kernel_size(), 1, "kernel_size");
  derived_.stride_h = stride() ? pool::per_dim(*stride(), 0, "stride") : derived_.kernel_h;
  derived_.stride_w = stride() ? pool::per_dim(*stride(), 1, "stride") : derived_.kernel_w;
  derived_.padding_h = pool::per_dim(padding(), 0, "padding");
  derived_.padding_w = pool::per_dim(padding(), 1, "padding");
  derived_.dilation_h = pool::per_dim(dilation(), 0, "dilation");
  derived_.dilation_w = pool::per_dim(dilation(), 1, "dilation");
}

OpOutputs MaxPool2dFwdOp::forward(const CallArgs& args) {
  using MaxPool = ops::MaxPool2dFwdOp::MaxPool2d;
  const Tensor x = args.inputs[0].contiguous();
  MaxPool::Call call;
  call.device = x.device();
  call.kernel_h = kernel_h();
  call.kernel_w = kernel_w();
  call.stride_h = stride_h();
  call.stride_w = stride_w();
  call.padding_h = padding_h();
  call.padding_w = padding_w();
  call.dilation_h = dilation_h();
  call.dilation_w = dilation_w();
  call.dtype = x.dtype();
  Tensor y = pooled_output(
      x, pool::output_size(x.shape()[2], kernel_h(), stride_h(), padding_h(), dilation_h(), ceil_mode()),
      pool::output_size(x.shape()[3], kernel_w(), stride_w(), padding_w(), dilation_w(), ceil_mode()));
  kernel_for<MaxPool>(call).forward(x, y);
  return outputs_of(std::move(y));
}

void AvgPool2dFwdOp::derive() {
  derived_.kernel_h = pool::per_dim(kernel_size(), 0, "kernel_size");
  derived_.kernel_w = pool::per_dim(kernel_size(), 1, "kernel_size");
  derived_.stride_h = stride() ? pool::per_dim(*stride(), 0, "stride") : derived_.kernel_h;
  derived_.stride_w = stride() ? pool::per_dim(*stride(), 1, "stride") : derived_.kernel_w;
  derived_.padding_h = pool::per_dim(padding(), 0, "padding");
  derived_.padding_w = pool::per_dim(padding(), 1, "padding");
}

OpOutputs AvgPool2dFwdOp::forward(const CallArgs& args) {
  using AvgPool = ops::AvgPool2dFwdOp::AvgPool2d;
  const Tensor x = args.inputs[0].contiguous();
  AvgPool::Call call;
  call.device = x.device();
  call.kernel_h = kernel_h();
  call.kernel_w = kernel_w();
  call.stride_h = stride_h();
  call.stride_w = stride_w();
  call.padding_h = padding_h();
  call.padding_w = padding_w();
  call.count_include_pad = count_include_pad();
  call.divisor = divisor_override().value_or(0);
  call.dtype = x.dtype();
  Tensor y = pooled_output(x, pool::output_size(x.shape()[2], kernel_h(), stride_h(), padding_h(), 1, ceil_mode()),
                           pool::output_size(x.shape()[3], kernel_w(), stride_w(), padding_w(), 1, ceil_mode()));
  kernel_for<AvgPool>(call).forward(x, y);
  return outputs_of(std::move(y));
}

}  // namespace tileops
