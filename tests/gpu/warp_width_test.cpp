// The GPU kernels' warp reductions and shuffles (plugins/gpu_common/device/portability.hpp) at
// the warp's own width and at a sub-warp width on a CUDA device: the helpers take the width as
// a parameter, so a 32-lane GPU also checks them at a width other than its own, as AMD's
// wave64 and wave32 targets use them at two widths.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "support/gpu.hpp"
#if TILEOPS_TEST_CUDA_KERNELS
#include "gpu/warp_width_kernels.hpp"
#endif

TEST_CASE("gpu warp helpers: sums, maxima, lane exchanges and block sums at widths 32 and 16 on a CUDA device") {
#if !TILEOPS_TEST_CUDA_KERNELS
  std::cout << "SKIPPED (GPU): this build compiles no CUDA code (TILEOPS_WITH_CUDA)\n";
#else
  if (tileops::testing::cuda_or_skip() == nullptr) return;
  constexpr int kThreads = 256;
  // Small integers: every sum is exact in float, whatever the order of the additions.
  std::vector<float> values(kThreads);
  for (int t = 0; t < kThreads; ++t) values[t] = static_cast<float>((t * 37) % 101 - 50);
  float block_sum = 0.f;
  for (float v : values) block_sum += v;
  for (const int width : {32, 16}) {
    CAPTURE(width);
    const auto r = tileops::testing::run_warp_helpers(width, values);
    for (int t = 0; t < kThreads; ++t) {
      CAPTURE(t);
      const int first = t / width * width;  // the first thread of t's group
      float sum = 0.f, max = values[first];
      for (int u = first; u < first + width; ++u) {
        sum += values[u];
        max = std::max(max, values[u]);
      }
      CHECK(r.sum[t] == sum);
      CHECK(r.max[t] == max);
      CHECK(r.reversed[t] == first + ((t - first) ^ (width - 1)));
      CHECK(r.last_lane[t] == first + width - 1);
      CHECK(r.block_sum[t] == block_sum);
    }
  }
#endif
}
