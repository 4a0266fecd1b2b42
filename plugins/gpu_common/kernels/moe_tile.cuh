// What the routed experts' grouped GEMMs share (moe_mma.cu on mma.sync, moe_wgmma.cu on
// Hopper's wgmma): the K step, a block's row tile within its expert's group, the swizzled
// float32 act tile, and the split of a float32 pair into a high and a low 16-bit part.
#pragma once

#include <cstdint>
#include <type_traits>

#include "moe_experts.cuh"
#include "mma_sm80.cuh"

namespace tileops::gpu::moe_tile {

constexpr int kStepK = 64;  // the K extent of a pipeline stage

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

// The block's row tile: its expert's group rows [row0, row0 + rows), or rows 0 for a
// surplus block.
struct RowTile {
  std::int64_t expert;
  std::int32_t row0, rows;
};

// The row tile of block blockIdx.x: the linear row tiles map to experts through tile_start.
__device__ __forceinline__ RowTile find_row_tile(std::int64_t experts, const ExpertsWorkspace& w) {
  const std::int32_t tile = static_cast<std::int32_t>(blockIdx.x);
  if (tile >= w.tile_start[experts]) return {0, 0, 0};
  // The last expert whose first tile is at or before this one (empty groups have no tiles).
  std::int64_t lo = 0, hi = experts;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (w.tile_start[mid] <= tile) lo = mid;
    else hi = mid - 1;
  }
  const std::int32_t row0 = w.offsets[lo] + (tile - w.tile_start[lo]) * kTileRows;
  return {lo, row0, min(kTileRows, w.offsets[lo + 1] - row0)};
}

// The float element offset of float (row, col) in a kStepK-wide float32 tile: 4-float chunks
// XOR-swizzled by (row & 7) * 2, so that a fragment read's eight rows fall in distinct banks.
__device__ __forceinline__ int swizzled_f32(int row, int col) {
  return row * kStepK + (((col >> 2) ^ ((row & 7) << 1)) << 2) + (col & 3);
}

// Two floats rounded to T as a pair in one conversion, the first in the low half.
template <class T>
__device__ __forceinline__ std::uint32_t round_pair(float first, float second) {
  if constexpr (std::is_same_v<T, bf16>) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(first, second);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  } else {
    const __half2 pair = __floats2half2_rn(first, second);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  }
}

// The high part of a float pair rounded to T, and in `low` the remainder rounded to T.
template <class T>
__device__ __forceinline__ std::uint32_t split2(float2 v, std::uint32_t& low) {
  const std::uint32_t high = round_pair<T>(v.x, v.y);
  const T hx{static_cast<std::uint16_t>(high)}, hy{static_cast<std::uint16_t>(high >> 16)};
  low = round_pair<T>(v.x - to_float(hx), v.y - to_float(hy));
  return high;
}

#endif

}  // namespace tileops::gpu::moe_tile
