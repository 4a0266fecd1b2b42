// What the decode kernels share (attention_decode.cu, and attention_decode_mma.cu on CUDA): the
// launch parameters, the score constants, and the kernel that merges the parts a sequence's
// keys were split into.
#pragma once

#include <cmath>

#include "../device/fast_divisor.hpp"
#include "../host/attention_launchers.hpp"
#include "base2_softmax.cuh"
#include "launch.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {

// The parts a sequence's keys are split into at most: the merge reads them all per head.
inline constexpr int kMaxSplits = 256;

struct DecodeParams {
  DecodeArgs a;
  int group;         // query heads per KV head
  int group_chunks;  // blocks per KV head: the group's heads a block serves, rounded up
  int splits;
  FastDivisor block_size;  // a paged cache's: positions to pages (positions fit in 31 bits)
  float* part_o;    // [splits, batch, heads, head_dim] when splits > 1
  float* part_lse;  // [splits, batch, heads], base-2
};

// Programmatic dependent launch (CUDA compute capability 9.0 and later): a decode kernel lets
// the merge of its parts be launched as soon as all of its blocks run, and the merge waits for
// the decode grid to finish and its writes to be visible; the merge's blocks are then resident
// when the last part lands instead of starting a second launch. Both are no-ops in a launch
// without that dependency, and elsewhere.
__device__ __forceinline__ void let_dependent_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(TILEOPS_GPU_HIP)
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(TILEOPS_GPU_HIP)
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Threads of a merge block: at least the largest head_dim the decode launchers serve (256).
inline constexpr int kMergeThreads = 256;
// Parts a merge thread reads before the weights are known (the rest after).
inline constexpr int kMergeEarlyParts = 16;

// o[b, h] = the parts' outputs weighted by exp2(lse part - lse all): one block of kMergeThreads
// per (b, h). A batch of one at a long context splits into tens of parts, so the block's
// threads share them: kMergeThreads / head_dim groups of head_dim threads, group j summing
// parts j, j + groups, ... of one output element. Every part is written by its decode block
// (an empty one as zeros with weight 0), so a thread issues its first kMergeEarlyParts loads
// before the weights' reductions and without waiting on any of them: the merge then costs
// about two round trips to L2 instead of one per part. Requires 0 < head_dim <= kMergeThreads.
template <class T>
__global__ void __launch_bounds__(kMergeThreads) merge_splits_kernel(DecodeParams p) {
  wait_for_prerequisite_grid();
  const DecodeArgs& a = p.a;
  const std::int64_t bh = blockIdx.x;
  const std::int64_t parts_stride = a.batch * a.heads;
  const int d = static_cast<int>(a.head_dim);
  const int groups = kMergeThreads / d;
  const int group = static_cast<int>(threadIdx.x) / d, lane = static_cast<int>(threadIdx.x) % d;
  const bool sums = group < groups;  // threads past the last whole group only join the barriers
  const std::int64_t part_step = parts_stride * d;
  const float* part = p.part_o + bh * d + lane;
  __shared__ float s_weight[kMaxSplits];
  __shared__ float s_scratch[kMaxWarps];
  __shared__ float s_sum[kMergeThreads];

  float early[kMergeEarlyParts];
#pragma unroll
  for (int i = 0; i < kMergeEarlyParts; ++i) {
    const int s = group + i * groups;
    early[i] = sums && s < p.splits ? part[s * part_step] : 0.f;
  }
  float lse_max = kNegInf;
  for (int s = threadIdx.x; s < p.splits; s += blockDim.x) {
    s_weight[s] = p.part_lse[s * parts_stride + bh];
    lse_max = fmaxf(lse_max, s_weight[s]);
  }
  lse_max = block_reduce(lse_max, Max{}, kNegInf, s_scratch);
  float total = 0.f;
  for (int s = threadIdx.x; s < p.splits; s += blockDim.x) {
    s_weight[s] = exp2_rel(s_weight[s], lse_max);
    total += s_weight[s];
  }
  total = block_reduce(total, Add{}, 0.f, s_scratch);  // its barriers also publish s_weight

  // A part's weight is 0 where it holds no keys; its output is then 0, and not multiplied in.
  const auto weighted = [&](int s, float v) { return s_weight[s] > 0.f ? s_weight[s] * v : 0.f; };
  float o = 0.f;
  if (sums) {
#pragma unroll
    for (int i = 0; i < kMergeEarlyParts; ++i) {
      const int s = group + i * groups;
      if (s < p.splits) o += weighted(s, early[i]);
    }
#pragma unroll 8
    for (int s = group + kMergeEarlyParts * groups; s < p.splits; s += groups) o += weighted(s, part[s * part_step]);
  }
  s_sum[threadIdx.x] = o;
  __syncthreads();
  if (group == 0) {
    for (int g = 1; g < groups; ++g) o += s_sum[g * d + lane];
    static_cast<T*>(a.o)[bh * d + lane] = store_as<T>(total > 0.f ? o / total : 0.f);
  }
}

// Merges the online-softmax states that `warps` warps hold in shared memory for `rows` query
// heads (outputs at o[(w * rows + r) * o_stride + e], running maxima and sums at
// m[w * rows + r] and l[w * rows + r]) and stores head g0 + r of KV head kvh of sequence b: its
// output, or with split keys this part's output and log-sum-exp. Every thread of the block
// calls it; heads past the group are skipped.
template <class T>
__device__ __forceinline__ void store_merged(const DecodeParams& p, std::int64_t b, std::int64_t kvh, int g0,
                                             int split, int warps, int rows, int o_stride, const float* o,
                                             const float* m, const float* l) {
  const DecodeArgs& a = p.a;
  const int d = static_cast<int>(a.head_dim);
  for (int idx = threadIdx.x; idx < rows * d; idx += blockDim.x) {
    const int row = idx / d, e = idx % d;
    if (g0 + row >= p.group) continue;
    float m_all = kNegInf;
    for (int w = 0; w < warps; ++w) m_all = fmaxf(m_all, m[w * rows + row]);
    float l_all = 0.f, sum = 0.f;
    for (int w = 0; w < warps; ++w) {
      const float weight = exp2_rel(m[w * rows + row], m_all);
      l_all += l[w * rows + row] * weight;
      sum += o[(w * rows + row) * o_stride + e] * weight;
    }
    const std::int64_t h = kvh * p.group + g0 + row;
    const float out = l_all > 0.f ? sum / l_all : 0.f;
    if (p.splits == 1) {
      static_cast<T*>(a.o)[(b * a.heads + h) * d + e] = store_as<T>(out);
    } else {
      const std::int64_t at = (split * a.batch + b) * a.heads + h;
      p.part_o[at * d + e] = out;
      if (e == 0) p.part_lse[at] = l_all > 0.f ? m_all + log2f(l_all) : kNegInf;
    }
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
