// What the CUDA-only tensor-core attention kernels share (attention_prefill_mma.cu,
// attention_prefill_wgmma.cu, attention_decode_mma.cu): scores live in the MMA accumulator
// layout, 8 keys a chunk, where lane (g, t) holds rows g and g + 8 at keys 2t and 2t + 1 of each
// chunk (s[chunk][0..1] row g, s[chunk][2..3] row g + 8), and a quad of lanes shares a row. The
// softmax runs in base 2 (base2_softmax.cuh).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../host/attention_launchers.hpp"
#include "base2_softmax.cuh"
#include "launch.cuh"
#include "mma_sm80.cuh"

// The device helpers exist where the kernels using them have bodies: sm_80 and later (and the
// host pass).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

namespace tileops::gpu::attention_tile {

// The factor fold_row multiplies a tile's scores by on their way into base 2, for AttentionArgs
// or DecodeArgs. Raw scores (no soft cap) are scaled in the fold's one multiply-add that also
// subtracts the row's maximum, taken over the raw scores: that needs the factor positive, which
// the op's rules keep (sm_scale > 0). Capped scores reach the fold in base 2 already (factor 1).
template <bool kSoftcap, class Args>
__device__ __forceinline__ float fold_scale(const Args& a) {
  return kSoftcap ? 1.f : a.sm_scale * kLog2e;
}

// One raw score q . k as fold_row takes it: as it is without a soft cap, capped into base 2
// (softcap * tanh(sm_scale * raw / softcap) * log2(e)) with one.
template <bool kSoftcap, class Args>
__device__ __forceinline__ float fold_input(float raw, const Args& a) {
  if constexpr (kSoftcap) return a.softcap * tanhf(raw * (a.sm_scale / a.softcap)) * kLog2e;
  else return raw;
}

// 2^x in one multi-function-unit instruction: exp2f adds a fix-up for results below 2^-126,
// which flush to zero here (a probability that small adds nothing to a float32 sum).
__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// The share of a prefill block: kBr query rows from m0 of one (sequence b, head h), and the
// key tiles of kBc in [tile_begin, tile_end) that some of its rows see; q, k and v point at the
// first element of that head's row 0 (rows q_stride and kv_stride elements apart). Late query
// tiles come first: the causal mask makes them the heaviest.
template <class T, int kD, int kBr, int kBc>
struct PrefillBlock {
  std::int64_t b, h, m0, offset;  // query row i sits at key i + offset
  int tile_begin, tile_end;
  std::int64_t q_stride, kv_stride;
  const T* q;
  const T* k;
  const T* v;

  __device__ explicit PrefillBlock(const AttentionArgs& a)
      : PrefillBlock(a, q_tiles(a) - 1 - static_cast<int>(blockIdx.x % q_tiles(a)), blockIdx.x / q_tiles(a)) {}

  // The block of query tile mt (rows mt * kBr on) of (sequence, head) pair bh = b * heads + h.
  __device__ PrefillBlock(const AttentionArgs& a, int mt, std::int64_t bh) {
    h = bh % a.heads;
    b = bh / a.heads;
    const std::int64_t kvh = h / (a.heads / a.kv_heads);
    m0 = static_cast<std::int64_t>(mt) * kBr;
    offset = a.seq_kv - a.seq_q;
    const int kv_tiles = static_cast<int>((a.seq_kv + kBc - 1) / kBc);
    tile_begin = 0;
    tile_end = kv_tiles;
    if (a.causal) {
      const std::int64_t last_key = min_index(m0 + kBr, a.seq_q) - 1 + offset;
      tile_end = last_key < 0 ? 0 : static_cast<int>(min_index(kv_tiles, last_key / kBc + 1));
    }
    if (a.window_left >= 0) {
      const std::int64_t first_key = max_index(0, m0 + offset - a.window_left);
      tile_begin = static_cast<int>(min_index(first_key / kBc, kv_tiles));
    }
    q_stride = a.heads * kD;
    kv_stride = a.kv_heads * kD;
    q = static_cast<const T*>(a.q) + (b * a.seq_q * a.heads + h) * kD;
    k = static_cast<const T*>(a.k) + (b * a.seq_kv * a.kv_heads + kvh) * kD;
    v = static_cast<const T*>(a.v) + (b * a.seq_kv * a.kv_heads + kvh) * kD;
  }

  // The query tiles of kBr rows in a sequence.
  __device__ static int q_tiles(const AttentionArgs& a) { return static_cast<int>((a.seq_q + kBr - 1) / kBr); }

  // Whether key tile `tile` crosses an edge of the mask (the end of the keys, the causal
  // diagonal or the window) for some row of the block.
  __device__ bool crosses_mask_edge(const AttentionArgs& a, int tile) const {
    const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
    return n0 + kBc > a.seq_kv || (a.causal && n0 + kBc - 1 > m0 + offset) ||
           (a.window_left >= 0 && n0 < m0 + kBr - 1 + offset - a.window_left);
  }
};

// The window in 32-bit keys (-1: none); a window wider than any sequence the launchers admit
// (2^30) is no window.
__device__ __forceinline__ int window_of(const AttentionArgs& a) {
  return a.window_left < 0 || a.window_left > (1 << 30) ? -1 : static_cast<int>(a.window_left);
}

// Turns one row tile's raw scores of a key tile into fold_row's input (fold_input) and, where
// the tile crosses a mask edge, sets the keys its rows do not see to -inf: keys_left keys exist
// from the tile's first, and diag0 is the key offset (from the tile's first key) of lane row g's
// own position.
template <bool kSoftcap, int kChunks>
__device__ __forceinline__ void cap_and_mask(float (&s)[kChunks][4], const AttentionArgs& a, bool edge, int keys_left,
                                             int diag0, int window) {
  const int t = (threadIdx.x % 32) & 3;
#pragma unroll
  for (int nt = 0; nt < kChunks; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = fold_input<kSoftcap>(s[nt][e], a);
      if (edge) {
        const int j = nt * 8 + 2 * t + (e & 1);
        const int diag = diag0 + (e >> 1) * 8;
        const bool visible = j < keys_left && (!a.causal || j <= diag) && (window < 0 || j >= diag - window);
        if (!visible) x = kNegInf;
      }
      s[nt][e] = x;
    }
  }
}

// Folds the scores of one of a row tile's two rows (half 0: row g, half 1: row g + 8), times
// `scale` (fold_scale), into its running softmax in base 2: the running maximum m_run and this
// lane's partial sum l_run move on and the scores become their unnormalised probabilities.
// Returns the factor the row's earlier output takes.
template <int kChunks>
__device__ __forceinline__ float fold_row(float (&s)[kChunks][4], int half, float scale, float& m_run, float& l_run) {
  float mx = kNegInf;
#pragma unroll
  for (int nt = 0; nt < kChunks; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * half], s[nt][2 * half + 1]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const float m_new = fmaxf(m_run, mx * scale);
  // A row that has seen no visible key keeps m = -inf: subtracting 0 then gives its
  // probabilities 2^-inf = 0 (not the NaN of -inf - -inf), with no test per score.
  const float m_sub = m_new == kNegInf ? 0.f : m_new;
  const float factor = exp2_ftz(m_run - m_sub);
  m_run = m_new;
  float sum = 0.f;
#pragma unroll
  for (int nt = 0; nt < kChunks; ++nt) {
    s[nt][2 * half] = exp2_ftz(fmaf(s[nt][2 * half], scale, -m_sub));
    s[nt][2 * half + 1] = exp2_ftz(fmaf(s[nt][2 * half + 1], scale, -m_sub));
    sum += s[nt][2 * half] + s[nt][2 * half + 1];
  }
  l_run = l_run * factor + sum;  // this lane's part; the quad sums at the end
  return factor;
}

// Scales one row (half as in fold_row) of an output accumulator.
template <int kOutChunks>
__device__ __forceinline__ void rescale_row(float (&o)[kOutChunks][4], int half, float factor) {
#pragma unroll
  for (int i = 0; i < kOutChunks; ++i) {
    o[i][2 * half] *= factor;
    o[i][2 * half + 1] *= factor;
  }
}

// Folds a row tile's scores into the running softmax of its two rows (fold_row) and rescales o,
// the output accumulator of the same rows.
template <int kChunks, int kOutChunks>
__device__ __forceinline__ void fold_into_softmax(float (&s)[kChunks][4], float scale, float (&o)[kOutChunks][4],
                                                  float (&m_run)[2], float (&l_run)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) rescale_row(o, half, fold_row(s, half, scale, m_run[half], l_run[half]));
}

// fold_into_softmax in two steps, for an o still being accumulated when the scores are folded:
// fold_scores gives each row's factor, rescale_rows applies them once o may be touched.
template <int kChunks>
__device__ __forceinline__ void fold_scores(float (&s)[kChunks][4], float scale, float (&m_run)[2], float (&l_run)[2],
                                            float (&factors)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) factors[half] = fold_row(s, half, scale, m_run[half], l_run[half]);
}
template <int kOutChunks>
__device__ __forceinline__ void rescale_rows(float (&o)[kOutChunks][4], const float (&factors)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) rescale_row(o, half, factors[half]);
}

// Writes this lane's part of output rows row0 and row0 + 8 (those below a.seq_q) of the
// block's (b, h), normalised by the quad's summed l_run, and their lse (natural log) when asked;
// a row that saw no key gets o = 0 and lse = -inf.
template <class T, int kD, class Block>
__device__ __forceinline__ void store_rows(const AttentionArgs& a, const Block& block, std::int64_t row0,
                                           float (&o)[kD / 8][4], const float (&m_run)[2], const float (&l_run)[2]) {
  const int t = (threadIdx.x % 32) & 3;
  T* out = static_cast<T*>(a.o) + (block.b * a.seq_q * a.heads + block.h) * kD;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float l = l_run[half];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const std::int64_t i = row0 + half * 8;
    if (i >= a.seq_q) continue;
    const float inv = l > 0.f ? 1.f / l : 0.f;
    T* row = out + i * block.q_stride;
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt) {
      *reinterpret_cast<std::uint32_t*>(row + dt * 8 + 2 * t) =
          pack2<T>(o[dt][2 * half] * inv, o[dt][2 * half + 1] * inv);
    }
    if (a.lse != nullptr && t == 0) {
      a.lse[(block.b * a.heads + block.h) * a.seq_q + i] = l > 0.f ? (m_run[half] + log2f(l)) * kLn2 : kNegInf;
    }
  }
}

}  // namespace tileops::gpu::attention_tile

#endif

namespace tileops::gpu::attention_tile {

// Launches a tensor-core prefill kernel over blocks of kBr query rows: checks the bounds the
// kernels assume (sequences of at most 2^30, a grid of at most 2^31 - 1 blocks; ValueError
// otherwise), then calls launch(T{}, D, Softcap, grid, stream) with T the call's element type
// (f16 or bf16), D its head dim (std::integral_constant 64 or 128) and Softcap whether it caps
// (std::bool_constant), and checks the launch under `name`.
template <int kBr, class Launch>
void launch_prefill(const AttentionArgs& a, void* stream, const char* name, Launch&& launch) {
  if (a.seq_q > (1 << 30) || a.seq_kv > (1 << 30)) {
    throw ValueError("gpu attention: sequences of " + std::to_string(a.seq_q) + " queries and " +
                     std::to_string(a.seq_kv) + " keys; at most 2^30 of each are served");
  }
  const std::int64_t blocks = ceil_div(a.seq_q, kBr) * a.heads * a.batch;
  if (blocks > 0x7fffffff) throw ValueError("gpu attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const auto grid = static_cast<unsigned>(blocks);
  const NativeStream s = native_stream(stream);
  const auto with_type = [&](auto type) {
    const bool softcap = a.softcap > 0.f;
    if (a.head_dim == 64) {
      softcap ? launch(type, std::integral_constant<int, 64>{}, std::true_type{}, grid, s)
              : launch(type, std::integral_constant<int, 64>{}, std::false_type{}, grid, s);
    } else {
      softcap ? launch(type, std::integral_constant<int, 128>{}, std::true_type{}, grid, s)
              : launch(type, std::integral_constant<int, 128>{}, std::false_type{}, grid, s);
    }
  };
  if (a.dtype == DType::bfloat16) with_type(bf16{});
  else with_type(f16{});
  check_launch(name);
}

}  // namespace tileops::gpu::attention_tile
