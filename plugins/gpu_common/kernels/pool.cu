// 2-D max and average pooling over NCHW planes: one thread per output element, consecutive
// threads along the output row so that a warp reads neighbouring input columns.
#include <cmath>

#include "../host/pool_launcher.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void max_pool2d_kernel(Pool2dArgs a) {
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  for (std::int64_t k = global_thread(); k < total; k += grid_threads()) {
    const std::int64_t j = k % a.out_w;
    const std::int64_t i = (k / a.out_w) % a.out_h;
    const T* plane = x + (k / (a.out_w * a.out_h)) * a.h * a.w;
    const std::int64_t r0 = i * a.stride_h - a.padding_h;
    const std::int64_t c0 = j * a.stride_w - a.padding_w;
    float best = -INFINITY;
    for (std::int64_t t = 0; t < a.kernel_h; ++t) {
      const std::int64_t r = r0 + t * a.dilation_h;
      if (r < 0 || r >= a.h) continue;
      for (std::int64_t u = 0; u < a.kernel_w; ++u) {
        const std::int64_t c = c0 + u * a.dilation_w;
        if (c < 0 || c >= a.w) continue;
        const float v = to_float(plane[r * a.w + c]);
        if (v > best || isnan(v)) best = v;  // a NaN, once taken, is never replaced
      }
    }
    y[k] = store_as<T>(best);
  }
}

template <class T>
__global__ void avg_pool2d_kernel(Pool2dArgs a) {
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  for (std::int64_t k = global_thread(); k < total; k += grid_threads()) {
    const std::int64_t j = k % a.out_w;
    const std::int64_t i = (k / a.out_w) % a.out_h;
    const T* plane = x + (k / (a.out_w * a.out_h)) * a.h * a.w;
    // The window clipped to the padded input, then to x.
    const std::int64_t r0 = i * a.stride_h - a.padding_h;
    const std::int64_t c0 = j * a.stride_w - a.padding_w;
    const std::int64_t r1 = min(r0 + a.kernel_h, a.h + a.padding_h);
    const std::int64_t c1 = min(c0 + a.kernel_w, a.w + a.padding_w);
    const std::int64_t rs = max(r0, std::int64_t{0}), re = min(r1, a.h);
    const std::int64_t cs = max(c0, std::int64_t{0}), ce = min(c1, a.w);
    float sum = 0.0f;
    for (std::int64_t r = rs; r < re; ++r) {
      for (std::int64_t c = cs; c < ce; ++c) sum += to_float(plane[r * a.w + c]);
    }
    const std::int64_t divisor =
        a.divisor != 0 ? a.divisor : (a.count_include_pad ? (r1 - r0) * (c1 - c0) : (re - rs) * (ce - cs));
    y[k] = store_as<T>(sum / static_cast<float>(divisor));
  }
}

}  // namespace

void launch_max_pool2d(const Pool2dArgs& a, void* stream) {
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  if (total == 0) return;
  with_float_type(a.dtype, "max_pool2d", [&](auto tag) {
    max_pool2d_kernel<decltype(tag)><<<blocks_for(total, kThreads), kThreads, 0, native_stream(stream)>>>(a);
  });
  check_launch("max_pool2d");
}

void launch_avg_pool2d(const Pool2dArgs& a, void* stream) {
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  if (total == 0) return;
  with_float_type(a.dtype, "avg_pool2d", [&](auto tag) {
    avg_pool2d_kernel<decltype(tag)><<<blocks_for(total, kThreads), kThreads, 0, native_stream(stream)>>>(a);
  });
  check_launch("avg_pool2d");
}

}  // namespace tileops::gpu
