// The RoPE family on the GPU: one launch serves every form, layout and factor set.
#include <cmath>

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {
namespace {

// long_factor: with positions, the long factors the device may pick instead of `factors`.
template <class Call>
Tensor rotate(const Call& call, const Tensor& x, const Tensor& positions, const Tensor& factors,
              const Tensor& long_factor = Tensor(), std::int64_t long_after = 0) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Shape& s = x.shape();
  const bool heads_first = call.layout == decltype(call.layout)::bhsd;
  RopeArgs args{x.data_ptr(), positions.defined() ? positions.template data<std::int64_t>() : nullptr,
                factors.defined() ? factors.template data<float>() : nullptr, y.data_ptr(), s[0] * s[1] * s[2],
                heads_first ? s[2] : s[1], heads_first ? s[1] : s[2], s[3] / 2, heads_first,
                call.form == decltype(call.form)::interleaved, std::log2(call.theta), call.scale, x.dtype()};
  Tensor choice;
  if (long_factor.defined()) {
    choice = Tensor::empty({1}, DType::int32, x.device());
    args.long_factors = long_factor.template data<float>();
    args.long_after = long_after;
    args.choice = choice.template data<std::int32_t>();
  }
  launch_rope(args, stream_of(x));
  return y;
}

}  // namespace

Tensor RopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

Tensor RopeInterleavedKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

// Without positions the sequence axis decides; with them the device does.
Tensor LongRopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& short_factor,
                               const Tensor& long_factor) {
  if (positions.defined()) return rotate(call_, x, positions, short_factor, long_factor, call_.original_max_positions);
  const std::int64_t length = x.shape()[call_.layout == decltype(call_.layout)::bhsd ? 2 : 1];
  return rotate(call_, x, positions, length > call_.original_max_positions ? long_factor : short_factor);
}

}  // namespace tileops::gpu
