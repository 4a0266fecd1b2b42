// 2-D max and average pooling over NCHW planes: one thread per output element, consecutive
// threads along the output row so that a warp reads neighbouring input columns. Index
// arithmetic runs in I, 32 bits whenever every offset fits, since 64-bit division is many
// instructions on a GPU.
#include <cmath>

#include "../host/pool_launcher.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

// The geometry of Pool2dArgs in the index type I.
template <class I>
struct Window {
  I h, w, out_h, out_w, kernel_h, kernel_w, stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w, total;
  explicit Window(const Pool2dArgs& a)
      : h(static_cast<I>(a.h)),
        w(static_cast<I>(a.w)),
        out_h(static_cast<I>(a.out_h)),
        out_w(static_cast<I>(a.out_w)),
        kernel_h(static_cast<I>(a.kernel_h)),
        kernel_w(static_cast<I>(a.kernel_w)),
        stride_h(static_cast<I>(a.stride_h)),
        stride_w(static_cast<I>(a.stride_w)),
        padding_h(static_cast<I>(a.padding_h)),
        padding_w(static_cast<I>(a.padding_w)),
        dilation_h(static_cast<I>(a.dilation_h)),
        dilation_w(static_cast<I>(a.dilation_w)),
        total(static_cast<I>(a.planes * a.out_h * a.out_w)) {}
};

// Output element k's input plane and the top-left corner of its window (in the padding when
// negative).
template <class T, class I>
struct WindowOrigin {
  const T* plane;
  I r0, c0;
};
template <class T, class I>
__device__ __forceinline__ WindowOrigin<T, I> window_origin(const Window<I>& a, const T* x, I k) {
  const I j = k % a.out_w;
  const I rest = k / a.out_w;
  const I i = rest % a.out_h;
  return {x + (rest / a.out_h) * a.h * a.w, i * a.stride_h - a.padding_h, j * a.stride_w - a.padding_w};
}

template <class T, class I>
__global__ void max_pool2d_kernel(const T* __restrict__ x, T* __restrict__ y, Window<I> a) {
  for (I k = static_cast<I>(global_thread()); k < a.total; k += static_cast<I>(grid_threads())) {
    const auto [plane, r0, c0] = window_origin(a, x, k);
    float best = -INFINITY;
    for (I t = 0; t < a.kernel_h; ++t) {
      const I r = r0 + t * a.dilation_h;
      if (r < 0 || r >= a.h) continue;
      for (I u = 0; u < a.kernel_w; ++u) {
        const I c = c0 + u * a.dilation_w;
        if (c < 0 || c >= a.w) continue;
        const float v = to_float(plane[r * a.w + c]);
        if (v > best || isnan(v)) best = v;  // a NaN, once taken, is never replaced
      }
    }
    y[k] = store_as<T>(best);
  }
}

template <class T, class I>
__global__ void avg_pool2d_kernel(const T* __restrict__ x, T* __restrict__ y, Window<I> a, I fixed_divisor,
                                  bool count_include_pad) {
  for (I k = static_cast<I>(global_thread()); k < a.total; k += static_cast<I>(grid_threads())) {
    const auto [plane, r0, c0] = window_origin(a, x, k);
    // The window clipped to the padded input, then to x.
    const I r1 = min(r0 + a.kernel_h, a.h + a.padding_h);
    const I c1 = min(c0 + a.kernel_w, a.w + a.padding_w);
    const I rs = max(r0, I{0}), re = min(r1, a.h);
    const I cs = max(c0, I{0}), ce = min(c1, a.w);
    float sum = 0.0f;
    for (I r = rs; r < re; ++r) {
      for (I c = cs; c < ce; ++c) sum += to_float(plane[r * a.w + c]);
    }
    const I divisor = fixed_divisor != 0 ? fixed_divisor : (count_include_pad ? (r1 - r0) * (c1 - c0) : (re - rs) * (ce - cs));
    y[k] = store_as<T>(sum / static_cast<float>(divisor));
  }
}

// Runs body(Window<I>) with I = int32 when every offset of x and y and every window position
// fits in it, else int64.
template <class Body>
void with_index_type(const Pool2dArgs& a, Body body) {
  // In double: the sizes are bounded by the signature check, their products here need not be.
  constexpr double kLimit = 1 << 30;
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double reach_h = d(a.h) + d(a.padding_h) + d(a.kernel_h) * d(a.dilation_h) + d(a.out_h) * d(a.stride_h);
  const double reach_w = d(a.w) + d(a.padding_w) + d(a.kernel_w) * d(a.dilation_w) + d(a.out_w) * d(a.stride_w);
  if (d(a.planes) * d(a.h) * d(a.w) < kLimit && d(a.planes) * d(a.out_h) * d(a.out_w) < kLimit &&
      reach_h * reach_w < kLimit) {
    body(Window<std::int32_t>(a));
  } else {
    body(Window<std::int64_t>(a));
  }
}

}  // namespace

void launch_max_pool2d(const Pool2dArgs& a, void* stream) {
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  if (total == 0) return;
  with_float_type(a.dtype, "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    with_index_type(a, [&](auto window) {
      max_pool2d_kernel<<<blocks_for(total, kThreads), kThreads, 0, native_stream(stream)>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), window);
    });
  });
  check_launch("max_pool2d");
}

void launch_avg_pool2d(const Pool2dArgs& a, void* stream) {
  const std::int64_t total = a.planes * a.out_h * a.out_w;
  if (total == 0) return;
  with_float_type(a.dtype, "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    with_index_type(a, [&](auto window) {
      using I = decltype(window.total);
      avg_pool2d_kernel<<<blocks_for(total, kThreads), kThreads, 0, native_stream(stream)>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), window, static_cast<I>(a.divisor), a.count_include_pad);
    });
  });
  check_launch("avg_pool2d");
}

}  // namespace tileops::gpu
