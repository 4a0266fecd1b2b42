#include "elementwise_reference.hpp"

#include <cmath>
#include <limits>

#include "common/activations.hpp"
#include "common/dtype_dispatch.hpp"
#include "tileops/extend/alibi_slope.hpp"

namespace tileops::ref {

Tensor SiluAndMulFwdOp::SiluAndMul::forward(const Tensor& x) {
  const std::int64_t rows = x.shape()[0];
  const std::int64_t n = x.shape()[1] / 2;
  Tensor y = Tensor::empty({rows, n}, x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < n; ++j) {
        const double gate = load(in[r * 2 * n + j]);
        const double up = load(in[r * 2 * n + n + j]);
        out[r * n + j] = store<T>(silu(gate) * up);
      }
    }
  });
  return y;
}

void AddFwdOp::Add::forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) {
  // Index a and b through the output's coordinates, with stride 0 on broadcast axes.
  const Shape& shape = out.shape();
  const std::size_t rank = shape.size();
  auto broadcast_strides = [&](const Tensor& t) {
    Strides s(rank, 0);
    const std::size_t lead = rank - t.shape().size();
    for (std::size_t i = 0; i < t.shape().size(); ++i) s[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
    return s;
  };
  const Strides sa = broadcast_strides(a);
  const Strides sb = broadcast_strides(b);
  const std::int64_t total = out.numel();
  visit_dtype(out.dtype(), [&]<class T>(TypeTag<T>) {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    for (std::int64_t i = 0; i < total; ++i) {
      std::int64_t oa = 0, ob = 0, rest = i;
      for (std::size_t d = rank; d-- > 0;) {
        const std::int64_t coord = rest % shape[d];
        rest /= shape[d];
        oa += coord * sa[d];
        ob += coord * sb[d];
      }
      if constexpr (std::is_integral_v<T>) {
        po[i] = static_cast<T>(static_cast<std::int64_t>(pa[oa]) + static_cast<std::int64_t>(alpha) * static_cast<std::int64_t>(pb[ob]));
      } else {
        po[i] = store<T>(load(pa[oa]) + alpha * load(pb[ob]));
      }
    }
  });
}

namespace {

// out[i] = f(x[i]) in double, element by element (x and out contiguous, one dtype).
template <class F>
void map_in_double(const Tensor& x, const Tensor& out, F f) {
  const std::int64_t total = x.numel();
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* po = out.data<T>();
    for (std::int64_t i = 0; i < total; ++i) po[i] = store<T>(f(load(in[i])));
  });
}

}  // namespace

void ReluFwdOp::Relu::forward(const Tensor& x, const Tensor& out) {
  map_in_double(x, out, [](double v) { return v > 0 ? v : 0.0; });
}

void GeluFwdOp::Gelu::forward(const Tensor& x, const Tensor& out) {
  const bool tanh_form = call_.approximate == Approximation::tanh;
  map_in_double(x, out, [tanh_form](double v) {
    // Both formulas give 0 * inf = NaN at -inf, whose limit is -0.
    if (v == -std::numeric_limits<double>::infinity()) return -0.0;
    return tanh_form ? gelu_tanh(v) : gelu_erf(v);
  });
}

Tensor GeluAndMulFwdOp::GeluAndMul::forward(const Tensor& x) {
  const std::int64_t rows = x.shape()[0];
  const std::int64_t n = x.shape()[1] / 2;
  const bool tanh_form = call_.approximate == Approximation::tanh;
  Tensor y = Tensor::empty({rows, n}, x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t j = 0; j < n; ++j) {
        const double gate = load(in[r * 2 * n + j]);
        const double up = load(in[r * 2 * n + n + j]);
        // gelu(-inf) is -0, its limit, as GeluFwdOp gives it.
        const double g = gate == -std::numeric_limits<double>::infinity() ? -0.0
                         : tanh_form                                       ? gelu_tanh(gate)
                                                                           : gelu_erf(gate);
        out[r * n + j] = store<T>(g * up);
      }
    }
  });
  return y;
}

Tensor AlibiFwdOp::Alibi::forward() {
  const std::int64_t h = call_.num_heads, s = call_.seq_len;
  Tensor y = Tensor::empty({h, s, s}, call_.dtype, call_.device.value_or(Device::cpu()));
  visit_dtype(call_.dtype, [&]<class T>(TypeTag<T>) {
    T* out = y.data<T>();
    for (std::int64_t head = 0; head < h; ++head) {
      const double slope = alibi_slope(head, h);
      for (std::int64_t i = 0; i < s; ++i) {
        for (std::int64_t j = 0; j < s; ++j) out[(head * s + i) * s + j] = store<T>(slope * static_cast<double>(j - i));
      }
    }
  });
  return y;
}

}  // namespace tileops::ref
