// What the decode kernels share (attention_decode.cu, and attention_decode_mma.cu on CUDA): the
// launch parameters, the score constants, and the kernel that merges the parts a sequence's
// keys were split into.
#pragma once

#include <cmath>

#include "../host/attention_launchers.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kNegInf = -INFINITY;
// The parts a sequence's keys are split into at most: the merge reads them all per head.
inline constexpr int kMaxSplits = 256;

struct DecodeParams {
  DecodeArgs a;
  int group;         // query heads per KV head
  int group_chunks;  // blocks per KV head: the group's heads a block serves, rounded up
  int splits;
  float* part_o;    // [splits, batch, heads, head_dim] when splits > 1
  float* part_lse;  // [splits, batch, heads], base-2
};

// exp2 of a difference whose larger side may be -inf (then 0, not NaN).
__device__ __forceinline__ float exp2_rel(float x, float max) { return max == kNegInf ? 0.f : exp2f(x - max); }

// o[b, h] = the parts' outputs weighted by exp2(lse part - lse all): one block per (b, h).
template <class T>
__global__ void merge_splits_kernel(DecodeParams p) {
  const DecodeArgs& a = p.a;
  const std::int64_t bh = blockIdx.x;
  const std::int64_t parts_stride = a.batch * a.heads;
  __shared__ float s_weight[kMaxSplits];
  __shared__ float s_total;
  if (threadIdx.x == 0) {
    float lse_max = kNegInf;
    for (int s = 0; s < p.splits; ++s) lse_max = fmaxf(lse_max, p.part_lse[s * parts_stride + bh]);
    float total = 0.f;
    for (int s = 0; s < p.splits; ++s) {
      s_weight[s] = exp2_rel(p.part_lse[s * parts_stride + bh], lse_max);
      total += s_weight[s];
    }
    s_total = total;
  }
  __syncthreads();
  for (std::int64_t e = threadIdx.x; e < a.head_dim; e += blockDim.x) {
    float o = 0.f;
    for (int s = 0; s < p.splits; ++s) {
      if (s_weight[s] > 0.f) o += s_weight[s] * p.part_o[(s * parts_stride + bh) * a.head_dim + e];
    }
    static_cast<T*>(a.o)[bh * a.head_dim + e] = store_as<T>(s_total > 0.f ? o / s_total : 0.f);
  }
}

// The key range [begin, end) that part `split` of `splits` of sequence b covers, its length
// read from device memory and checked (a length outside [0, capacity] is reported, by the
// caller's `reporter` thread, and counts as 0).
struct KeyRange {
  std::int64_t begin, end;
};
__device__ __forceinline__ KeyRange key_range(const DecodeArgs& a, std::int64_t b, int split, int splits,
                                              bool reporter) {
  std::int64_t n = a.seqlens[b];
  if (n < 0 || n > a.capacity) {
    if (reporter) {
      report_fault(a.faults, a.block_table != nullptr ? FaultSource::paged_decode : FaultSource::decode,
                   FaultKind::seqlen, b, 0, n, 0, a.capacity);
    }
    n = 0;
  }
  // The query sits at the last key: a window keeps the window_left keys before it.
  const std::int64_t lo = a.window_left >= 0 ? max_index(0, n - 1 - a.window_left) : 0;
  const std::int64_t per_split = (n - lo + splits - 1) / splits;
  const std::int64_t begin = lo + split * per_split;
  return {begin, min_index(n, begin + per_split)};
}

#if !defined(TILEOPS_GPU_HIP)
// The tensor-core kernel (attention_decode_mma.cu): query heads a block serves, and the launch
// (p.group_chunks counting blocks of that many heads).
int decode_mma_heads();
// Blocks of it a multiprocessor holds at once (its shared memory allows two).
int decode_mma_blocks_per_sm();
void launch_decode_mma(const DecodeParams& p, NativeStream stream);
#endif

}  // namespace tileops::gpu
