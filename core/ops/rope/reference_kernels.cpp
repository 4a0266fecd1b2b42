#include "rope_reference.hpp"

#include <cmath>
#include <vector>

#include "common/dtype_dispatch.hpp"

namespace tileops::ref {

Tensor RopeFwdOp::Rope::forward(const Tensor& x, const Tensor& positions) {
  const std::int64_t d = call_.head_dim;
  const std::int64_t half = d / 2;
  const std::int64_t batch = x.shape()[0];
  const std::int64_t seq = x.shape()[1];
  const std::int64_t heads = x.shape()[2];
  std::vector<double> inv_freq(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    inv_freq[i] = std::pow(call_.theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
  }
  const std::int64_t* pos = positions.defined() ? positions.data<std::int64_t>() : nullptr;
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t s = 0; s < seq; ++s) {
      const double p = static_cast<double>(pos ? pos[s] : s);
      for (std::int64_t i = 0; i < half; ++i) {
        const double c = std::cos(p * inv_freq[i]);
        const double sn = std::sin(p * inv_freq[i]);
        for (std::int64_t b = 0; b < batch; ++b) {
          for (std::int64_t h = 0; h < heads; ++h) {
            const std::int64_t row = ((b * seq + s) * heads + h) * d;
            const double x1 = load(in[row + i]);
            const double x2 = load(in[row + i + half]);
            out[row + i] = store<T>(x1 * c - x2 * sn);
            out[row + i + half] = store<T>(x2 * c + x1 * sn);
          }
        }
      }
    }
  });
  return y;
}

}  // namespace tileops::ref
