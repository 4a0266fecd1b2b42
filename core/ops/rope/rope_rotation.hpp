// The reference rotation every op of the RoPE family runs, and the geometry it reads.
#pragma once

#include <cstdint>

#include "tileops/tensor.hpp"

namespace tileops::ref {

// What one rotation call fixes besides its tensors.
struct RopeRotation {
  std::int64_t head_dim = 0;
  bool heads_first = false;  // x is [B, H, S, D] (BHSD) rather than [B, S, H, D] (BSHD)
  bool interleaved = false;  // pairs (2i, 2i + 1) rather than (i, i + D/2)
  double theta = 10000.0;
  double scale = 1.0;        // multiplies cos and sin
};

// x: contiguous rank 4 as `r` describes it, on the host; positions: int64, one per sequence
// index, or undefined for 0, 1, ...; factors: float32 [D/2] or undefined for ones. Returns the
// rotated copy of x, angles and products in double.
Tensor rotate(const Tensor& x, const Tensor& positions, const Tensor& factors, const RopeRotation& r);

}  // namespace tileops::ref
