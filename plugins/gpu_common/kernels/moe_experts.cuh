// The state the routed experts' kernels share (moe.cu, and moe_mma.cu on CUDA): the workspace
// the grouping steps fill and the products read, and the gate activations.
#pragma once

#include <cstdint>

#include "../device/portability.hpp"

namespace tileops::gpu {

inline constexpr int kTileRows = 128;  // routes of a tensor-core row tile

// The workspace, carved in this order, each part 32-byte aligned so that eight floats of a
// row are one aligned pack.
struct ExpertsWorkspace {
  std::int32_t* offsets;     // [experts + 1]: group e is sorted[offsets[e], offsets[e + 1])
  std::int32_t* cursor;      // [experts]: counts, then the fill position of each group
  std::int32_t* tile_start;  // [experts + 1]: the tensor-core row tiles (kTileRows) before group e
  std::int32_t* active;      // [1 + experts]: how many groups are not empty, then their experts
  std::int32_t* sorted;      // [routes]: the routes (m * top_k + k) grouped by expert
  std::int32_t* slot_of;     // [routes]: a route's place in `sorted`, -1 for a refused id
  float* act;                // [routes, inter]: act(gate) * up, by place
  float* out;                // [routes, hidden]: the expert's output, by place
};

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }
__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * erfcf(-v * 0.70710678118654752f); }

}  // namespace tileops::gpu
