// The constants of the attention kernels' online softmax, which runs in base 2 (exp2 is one
// instruction): scores are scaled by log2(e) up front and a log-sum-exp comes back to base e
// through ln(2). CUDA and HIP alike.
#pragma once

#include <cmath>

#include "../device/portability.hpp"

namespace tileops::gpu {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;
inline constexpr float kNegInf = -INFINITY;

// exp2 of a difference whose larger side may be -inf (then 0, not NaN): a row that has seen no
// visible key yet.
__device__ __forceinline__ float exp2_rel(float x, float max) { return max == kNegInf ? 0.f : exp2f(x - max); }

}  // namespace tileops::gpu
