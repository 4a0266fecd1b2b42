// The host-side interface of the shared 2-D pooling kernels (../kernels/pool.cu), with the rules
// of launchers.hpp.
#pragma once

#include <cstdint>

#include "tileops/dtype.hpp"

namespace tileops::gpu {

// x contiguous [planes, h, w], y contiguous [planes, out_h, out_w], dtype float32, float16 or
// bfloat16. Output (i, j) covers input rows i * stride_h - padding_h + a * dilation_h (a <
// kernel_h) and columns likewise; positions outside x are padding, never read. The op's
// signature check has made every size positive, 0 <= padding <= kernel / 2 and out_h, out_w
// the torch output sizes, so every window starts inside x or its leading padding. One thread per
// output element; accumulation in float.
struct Pool2dArgs {
  const void* x;
  void* y;
  DType dtype;
  std::int64_t planes, h, w, out_h, out_w;
  std::int64_t kernel_h, kernel_w, stride_h, stride_w, padding_h, padding_w;
  std::int64_t dilation_h = 1, dilation_w = 1;  // max pooling only
  bool count_include_pad = true;                // average pooling only
  std::int64_t divisor = 0;                     // average pooling only: 0 for the window's area
};
// y = the window's maximum; NaN when the window holds a NaN.
void launch_max_pool2d(const Pool2dArgs& args, void* stream);
// y = the window's sum divided by divisor, else by its area clipped to the padded input
// (count_include_pad) or to x. Dilation must be 1.
void launch_avg_pool2d(const Pool2dArgs& args, void* stream);

}  // namespace tileops::gpu
