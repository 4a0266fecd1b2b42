// RopeFwdOp on the GPU.
#include <cmath>

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {

Tensor RopeKernel::forward(const Tensor& x, const Tensor& positions) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Shape& s = x.shape();
  launch_rope({x.data_ptr(), positions.defined() ? positions.data<std::int64_t>() : nullptr, y.data_ptr(),
               s[0] * s[1] * s[2], s[1], s[2], s[3] / 2, std::log2(call_.theta), x.dtype()},
              stream_of(x));
  return y;
}

}  // namespace tileops::gpu
