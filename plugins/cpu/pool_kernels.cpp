#include "pool_kernels.hpp"

#include "cpu_kernels.hpp"

namespace tileops::cpu {

void MaxPool2dKernel::forward(const Tensor& x, const Tensor& y) {
  const Pool2dWindow window{call_.kernel_h,  call_.kernel_w,  call_.stride_h,   call_.stride_w,
                            call_.padding_h, call_.padding_w, call_.dilation_h, call_.dilation_w};
  max_pool2d(call_.dtype, x.shape()[0] * x.shape()[1], x.shape()[2], x.shape()[3], y.shape()[2], y.shape()[3], window,
             x.data_ptr(), y.data_ptr());
}

void AvgPool2dKernel::forward(const Tensor& x, const Tensor& y) {
  const Pool2dWindow window{call_.kernel_h, call_.kernel_w, call_.stride_h, call_.stride_w, call_.padding_h, call_.padding_w};
  avg_pool2d(call_.dtype, x.shape()[0] * x.shape()[1], x.shape()[2], x.shape()[3], y.shape()[2], y.shape()[3], window,
             call_.count_include_pad, call_.divisor, x.data_ptr(), y.data_ptr());
}

}  // namespace tileops::cpu
