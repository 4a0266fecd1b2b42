// MaxPool2dFwdOp and AvgPool2dFwdOp on the GPU.
#include "call_support.hpp"
#include "kernel_types.hpp"
#include "pool_launcher.hpp"

namespace tileops::gpu {
namespace {

Pool2dArgs pool_args(const Tensor& x, const Tensor& y) {
  Pool2dArgs a{};
  a.x = x.data_ptr();
  a.y = y.data_ptr();
  a.dtype = x.dtype();
  a.planes = x.shape()[0] * x.shape()[1];
  a.h = x.shape()[2];
  a.w = x.shape()[3];
  a.out_h = y.shape()[2];
  a.out_w = y.shape()[3];
  return a;
}

}  // namespace

void MaxPool2dKernel::forward(const Tensor& x, const Tensor& y) {
  DeviceGuard on(x.device().index());
  Pool2dArgs a = pool_args(x, y);
  a.kernel_h = call_.kernel_h;
  a.kernel_w = call_.kernel_w;
  a.stride_h = call_.stride_h;
  a.stride_w = call_.stride_w;
  a.padding_h = call_.padding_h;
  a.padding_w = call_.padding_w;
  a.dilation_h = call_.dilation_h;
  a.dilation_w = call_.dilation_w;
  launch_max_pool2d(a, stream_of(x));
}

void AvgPool2dKernel::forward(const Tensor& x, const Tensor& y) {
  DeviceGuard on(x.device().index());
  Pool2dArgs a = pool_args(x, y);
  a.kernel_h = call_.kernel_h;
  a.kernel_w = call_.kernel_w;
  a.stride_h = call_.stride_h;
  a.stride_w = call_.stride_w;
  a.padding_h = call_.padding_h;
  a.padding_w = call_.padding_w;
  a.count_include_pad = call_.count_include_pad;
  a.divisor = call_.divisor;
  launch_avg_pool2d(a, stream_of(x));
}

}  // namespace tileops::gpu
