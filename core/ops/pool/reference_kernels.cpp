#include "pool_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/dtype_dispatch.hpp"

namespace tileops::ref {

void MaxPool2dFwdOp::MaxPool2d::forward(const Tensor& x, const Tensor& y) {
  const std::int64_t planes = x.shape()[0] * x.shape()[1];
  const std::int64_t h = x.shape()[2], w = x.shape()[3];
  const std::int64_t out_h = y.shape()[2], out_w = y.shape()[3];
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    for (std::int64_t p = 0; p < planes; ++p) {
      const T* in = x.data<T>() + p * h * w;
      T* out = y.data<T>() + p * out_h * out_w;
      for (std::int64_t i = 0; i < out_h; ++i) {
        for (std::int64_t j = 0; j < out_w; ++j) {
          double best = -std::numeric_limits<double>::infinity();
          for (std::int64_t a = 0; a < call_.kernel_h; ++a) {
            const std::int64_t r = i * call_.stride_h - call_.padding_h + a * call_.dilation_h;
            if (r < 0 || r >= h) continue;
            for (std::int64_t b = 0; b < call_.kernel_w; ++b) {
              const std::int64_t c = j * call_.stride_w - call_.padding_w + b * call_.dilation_w;
              if (c < 0 || c >= w) continue;
              const double v = load(in[r * w + c]);
              if (v > best || std::isnan(v)) best = v;
              if (std::isnan(best)) break;
            }
            if (std::isnan(best)) break;
          }
          out[i * out_w + j] = store<T>(best);
        }
      }
    }
  });
}

void AvgPool2dFwdOp::AvgPool2d::forward(const Tensor& x, const Tensor& y) {
  const std::int64_t planes = x.shape()[0] * x.shape()[1];
  const std::int64_t h = x.shape()[2], w = x.shape()[3];
  const std::int64_t out_h = y.shape()[2], out_w = y.shape()[3];
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    for (std::int64_t p = 0; p < planes; ++p) {
      const T* in = x.data<T>() + p * h * w;
      T* out = y.data<T>() + p * out_h * out_w;
      for (std::int64_t i = 0; i < out_h; ++i) {
        // The window clipped to the padded input, then to x.
        const std::int64_t r0 = i * call_.stride_h - call_.padding_h;
        const std::int64_t r1 = std::min(r0 + call_.kernel_h, h + call_.padding_h);
        for (std::int64_t j = 0; j < out_w; ++j) {
          const std::int64_t c0 = j * call_.stride_w - call_.padding_w;
          const std::int64_t c1 = std::min(c0 + call_.kernel_w, w + call_.padding_w);
          const std::int64_t padded_area = (r1 - r0) * (c1 - c0);
          const std::int64_t rs = std::max<std::int64_t>(r0, 0), re = std::min(r1, h);
          const std::int64_t cs = std::max<std::int64_t>(c0, 0), ce = std::min(c1, w);
          double sum = 0;
          for (std::int64_t r = rs; r < re; ++r) {
            for (std::int64_t c = cs; c < ce; ++c) sum += load(in[r * w + c]);
          }
          const std::int64_t divisor =
              call_.divisor != 0 ? call_.divisor : (call_.count_include_pad ? padded_area : (re - rs) * (ce - cs));
          out[i * out_w + j] = store<T>(sum / static_cast<double>(divisor));
        }
      }
    }
  });
}

}  // namespace tileops::ref
