// Dense prefill attention: the launcher, and the portable kernel that serves what the
// tensor-core kernel (attention_prefill_mma.cu, CUDA sm_80 and later) does not: float32, head
// dims other than 64 and 128, unaligned views, and every call on HIP. The portable kernel gives
// each query row a warp; the warp scores a key per lane from the row kept in shared memory,
// folds the keys into an online softmax, and accumulates the values with each lane holding a
// slice of the head dim. Slow next to tensor cores, but exact in float and never holding the
// scores of more than one key per lane.
#include <cmath>

#include "../host/attention_launchers.hpp"
#include "base2_softmax.cuh"
#include "launch.cuh"
#if !defined(TILEOPS_GPU_HIP)
#include "attention_prefill_mma.cuh"
#endif

namespace tileops::gpu {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;  // in device code; the host launches warp_threads(kWarps, ...)
constexpr int kMaxD = 256;
constexpr int kSlices = kMaxD / kWarpSize;  // head-dim elements a lane accumulates


// A block serves kWarps consecutive query rows of one (sequence, head).
template <class T>
__global__ void __launch_bounds__(kThreads) prefill_portable_kernel(AttentionArgs a) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const std::int64_t row_blocks = (a.seq_q + kWarps - 1) / kWarps;
  const std::int64_t i = (blockIdx.x % row_blocks) * kWarps + warp;
  const std::int64_t bh = blockIdx.x / row_blocks;
  const std::int64_t h = bh % a.heads;
  const std::int64_t b = bh / a.heads;
  const std::int64_t kvh = h / (a.heads / a.kv_heads);
  const int d = static_cast<int>(a.head_dim);
  const bool active = i < a.seq_q;

  __shared__ float s_q[kWarps][kMaxD];
  const float q_scale = a.softcap > 0.f ? a.sm_scale : a.sm_scale * kLog2e;
  const T* q_row = static_cast<const T*>(a.q) + ((b * a.seq_q + (active ? i : 0)) * a.heads + h) * d;
  for (int e = lane; e < d; e += kWarpSize) s_q[warp][e] = to_float(q_row[e]) * q_scale;
  __syncthreads();

  const std::int64_t diag = i + a.seq_kv - a.seq_q;
  std::int64_t lo = a.window_left >= 0 ? max_index(0, diag - a.window_left) : 0;
  std::int64_t hi = a.causal ? min_index(max_index(diag + 1, 0), a.seq_kv) : a.seq_kv;
  if (!active) lo = hi = 0;

  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);
  const auto row_of = [&](std::int64_t j) { return ((b * a.seq_kv + j) * a.kv_heads + kvh) * d; };
  float m = kNegInf, l = 0.f;
  float acc[kSlices];
#pragma unroll
  for (int c = 0; c < kSlices; ++c) acc[c] = 0.f;
  for (std::int64_t j0 = lo; j0 < hi; j0 += kWarpSize) {
    const std::int64_t j = j0 + lane;
    float s = kNegInf;
    if (j < hi) {
      const T* key = k + row_of(j);
      float dot = 0.f;
      for (int e = 0; e < d; ++e) dot = fmaf(s_q[warp][e], to_float(key[e]), dot);
      s = a.softcap > 0.f ? a.softcap * tanhf(dot / a.softcap) * kLog2e : dot;
    }
    const float m_new = fmaxf(m, warp_reduce(s, Max{}));
    const float scale = exp2_rel(m, m_new);
    const float p = exp2_rel(s, m_new);
    l = l * scale + warp_reduce(p, Add{});
    m = m_new;
    const int keys = static_cast<int>(min_index(kWarpSize, hi - j0));
#pragma unroll
    for (int c = 0; c < kSlices; ++c) acc[c] *= scale;
    for (int jj = 0; jj < keys; ++jj) {
      const float pj = shuffle_from(p, jj);
      const T* value = v + row_of(j0 + jj);
#pragma unroll
      for (int c = 0; c < kSlices; ++c) {
        const int e = c * kWarpSize + lane;
        if (e < d) acc[c] = fmaf(pj, to_float(value[e]), acc[c]);
      }
    }
  }
  if (!active) return;
  T* o_row = static_cast<T*>(a.o) + ((b * a.seq_q + i) * a.heads + h) * d;
#pragma unroll
  for (int c = 0; c < kSlices; ++c) {
    const int e = c * kWarpSize + lane;
    if (e < d) o_row[e] = store_as<T>(l > 0.f ? acc[c] / l : 0.f);
  }
  if (a.lse != nullptr && lane == 0) a.lse[(b * a.heads + h) * a.seq_q + i] = l > 0.f ? (m + log2f(l)) * kLn2 : kNegInf;
}

}  // namespace

bool attention_uses_tensor_cores(const AttentionArgs& a, int arch) {
  return attention_tensor_cores_serve(arch, a.dtype, a.head_dim, {a.q, a.k, a.v, a.o});
}

void launch_attention(const AttentionArgs& a, int arch, void* stream) {
  if (a.batch == 0 || a.seq_q == 0 || a.heads == 0) return;
#if !defined(TILEOPS_GPU_HIP)
  if (attention_uses_tensor_cores(a, arch)) {
    launch_attention_mma(a, stream);
    return;
  }
#endif
  const std::int64_t blocks = ceil_div(a.seq_q, kWarps) * a.heads * a.batch;
  if (blocks > 0x7fffffff) throw ValueError("gpu attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const unsigned threads = warp_threads(kWarps, a.warp_size);
  with_float_type(a.dtype, "gqa_attention", [&](auto tag) {
    using T = decltype(tag);
    prefill_portable_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, native_stream(stream)>>>(a);
  });
  check_launch("gqa_attention");
}

}  // namespace tileops::gpu
