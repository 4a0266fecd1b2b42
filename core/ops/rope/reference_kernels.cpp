#include <algorithm>
#include <cmath>
#include <vector>

#include "common/dtype_dispatch.hpp"
#include "rope_reference.hpp"
#include "rope_rotation.hpp"

namespace tileops::ref {

Tensor rotate(const Tensor& x, const Tensor& positions, const Tensor& factors, const RopeRotation& r) {
  const std::int64_t d = r.head_dim;
  const std::int64_t half = d / 2;
  const std::int64_t batch = x.shape()[0];
  const std::int64_t seq = x.shape()[r.heads_first ? 2 : 1];
  const std::int64_t heads = x.shape()[r.heads_first ? 1 : 2];
  const float* factor = factors.defined() ? factors.data<float>() : nullptr;
  std::vector<double> inv_freq(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    inv_freq[i] = std::pow(r.theta, -2.0 * static_cast<double>(i) / static_cast<double>(d)) /
                  (factor ? static_cast<double>(factor[i]) : 1.0);
  }
  // Element j of pair i: neox pairs (i, i + D/2), interleaved pairs (2i, 2i + 1).
  const std::int64_t first_stride = r.interleaved ? 2 : 1;
  const std::int64_t second_offset = r.interleaved ? 1 : half;
  const std::int64_t* pos = positions.defined() ? positions.data<std::int64_t>() : nullptr;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t s = 0; s < seq; ++s) {
      const double p = static_cast<double>(pos ? pos[s] : s);
      for (std::int64_t i = 0; i < half; ++i) {
        const double c = std::cos(p * inv_freq[i]) * r.scale;
        const double sn = std::sin(p * inv_freq[i]) * r.scale;
        for (std::int64_t b = 0; b < batch; ++b) {
          for (std::int64_t h = 0; h < heads; ++h) {
            const std::int64_t row = (r.heads_first ? (b * heads + h) * seq + s : (b * seq + s) * heads + h) * d;
            const std::int64_t first = row + i * first_stride;
            const std::int64_t second = first + second_offset;
            const double x1 = load(in[first]);
            const double x2 = load(in[second]);
            out[first] = store<T>(x1 * c - x2 * sn);
            out[second] = store<T>(x2 * c + x1 * sn);
          }
        }
      }
    }
  });
  return y;
}

namespace {

template <class Call>
RopeRotation rotation_of(const Call& call) {
  using Layout = decltype(call.layout);
  using Form = decltype(call.form);
  return {call.head_dim, call.layout == Layout::bhsd, call.form == Form::interleaved, call.theta, call.scale};
}

}  // namespace

Tensor RopeFwdOp::Rope::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(x, positions, factors, rotation_of(call_));
}

Tensor RopeInterleavedFwdOp::Rope::forward(const Tensor& x, const Tensor& positions, const Tensor& factors) {
  return rotate(x, positions, factors, rotation_of(call_));
}

// The reference runs on the host, where positions can be read directly.
Tensor LongRoPEFwdOp::Rope::forward(const Tensor& x, const Tensor& positions, const Tensor& short_factor,
                                    const Tensor& long_factor) {
  const RopeRotation r = rotation_of(call_);
  std::int64_t length = x.shape()[r.heads_first ? 2 : 1];
  if (positions.defined()) {
    const std::int64_t* p = positions.data<std::int64_t>();
    length = positions.numel() == 0 ? 0 : *std::max_element(p, p + positions.numel()) + 1;
  }
  return rotate(x, positions, length > call_.original_max_positions ? long_factor : short_factor, r);
}

}  // namespace tileops::ref
