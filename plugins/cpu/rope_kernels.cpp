#include "rope_kernels.hpp"

#include <algorithm>

#include "cpu_kernels.hpp"

namespace tileops::cpu {
namespace {

template <class Call>
Tensor rotate(const Call& call, const Tensor& x, const Tensor& positions, const Tensor& factors) {
  const Shape& s = x.shape();
  const bool heads_first = call.layout == decltype(call.layout)::bhsd;
  RopeGeometry g;
  g.batch = s[0];
  g.seq = heads_first ? s[2] : s[1];
  g.heads = heads_first ? s[1] : s[2];
  g.half = s[3] / 2;
  g.heads_first = heads_first;
  g.interleaved = call.form == decltype(call.form)::interleaved;
  g.theta = call.theta;
  g.scale = call.scale;
  Tensor y = Tensor::empty(s, x.dtype(), x.device());
  rope(x.dtype(), g, positions.defined() ? positions.template data<std::int64_t>() : nullptr,
       factors.defined() ? factors.template data<float>() : nullptr, x.data_ptr(), y.data_ptr());
  return y;
}

}  // namespace

Tensor RopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

Tensor RopeInterleavedKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(call_, x, positions, factors);
}

Tensor LongRopeKernel::forward(const Tensor& x, const Tensor& positions, const Tensor& short_factor,
                               const Tensor& long_factor) {
  std::int64_t length = x.shape()[call_.layout == RopeLayout::bhsd ? 2 : 1];
  if (positions.defined()) {
    const std::int64_t* p = positions.data<std::int64_t>();
    length = positions.numel() == 0 ? 0 : *std::max_element(p, p + positions.numel()) + 1;
  }
  return rotate(call_, x, positions, length > call_.original_max_positions ? long_factor : short_factor);
}

}  // namespace tileops::cpu
