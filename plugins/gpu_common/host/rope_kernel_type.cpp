// The RoPE family on the GPU: one launch serves every form, layout and factor set.
#include <cmath>

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {
namespace {

template <class Call>
Tensor rotate(const Call& call, const Tensor& x, const Tensor& positions, const Tensor& factors) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Shape& s = x.shape();
  const bool heads_first = call.layout == decltype(call.layout)::bhsd;
  launch_rope({x.data_ptr(), positions.defined() ? positions.template data<std::int64_t>() : nullptr,
               factors.defined() ? factors.template data<float>() : nullptr, y.data_ptr(), s[0] * s[1] * s[2],
               heads_first ? s[2] : s[1], heads_first ? s[1] : s[2], s[3] / 2, heads_first,
               call.form == decltype(call.form)::interleaved, std::log2(call.theta), call.scale, x.dtype()},
              stream_of(x));
  return y;
}

}  // namespace

Tensor RopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

Tensor RopeInterleavedKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

Tensor LongRopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

}  // namespace tileops::gpu
