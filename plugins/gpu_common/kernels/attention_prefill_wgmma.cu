// Dense prefill attention on Hopper's warpgroup MMA (sm_90a machine code only; other passes
// compile a body that traps, which the launcher never reaches), float16 and bfloat16, head dim
// 64 or 128. A block of two warpgroups serves 128 query rows of one (sequence, head), 64 rows a
// warpgroup, and walks the key tiles of 128 the mask leaves. All 256 threads copy the next
// tile's keys and values to shared memory (cp.async) while this one is computed. S = Q K^T
// reads Q and K from shared memory by descriptor; the online softmax runs on S in registers;
// O += P V takes P from registers and V from shared memory, so one swizzled copy of a key tile
// serves S (K-major) and one of a value tile serves O (MN-major): wgmma_sm90.cuh.
#include "attention_prefill_wgmma.cuh"

#include <cmath>

#include "launch.cuh"
#include "mma_sm80.cuh"
#include "wgmma_sm90.cuh"

namespace tileops::gpu {

namespace {

constexpr int kBr = 128;  // query rows per block
constexpr int kBc = 128;  // keys per tile
constexpr int kThreads = 256;

#if defined(TILEOPS_HAS_WGMMA)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -INFINITY;

__device__ __forceinline__ float exp2_rel(float x, float max) { return max == kNegInf ? 0.f : exp2f(x - max); }

// Copies `kRows` rows of kD elements, row r from src + r * stride (rows at or past `valid_rows`
// zero-filled), into a swizzled tile.
template <class T, int kD, int kRows>
__device__ __forceinline__ void load_tile(T* tile, const T* src, std::int64_t stride, std::int64_t valid_rows) {
  constexpr int kChunks = kD / 8;
  for (int idx = threadIdx.x; idx < kRows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool valid = r < valid_rows;
    copy16_async(tile + swizzled_panel_offset<kRows>(r, c), valid ? src + r * stride + c * 8 : src, valid);
  }
}

// Makes this thread's completed copies visible to the tensor cores, which read shared memory
// through the async proxy.
__device__ __forceinline__ void fence_copies_for_wgmma() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
#endif

template <class T, int kD, bool kSoftcap>
__global__ void __launch_bounds__(kThreads, 1) prefill_wgmma_kernel(AttentionArgs a) {
#if defined(TILEOPS_HAS_WGMMA)
  extern __shared__ unsigned char smem_raw[];
  // Swizzled tiles repeat every 1024 bytes and must start on such a boundary.
  T* s_q = reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  T* s_k = s_q + kBr * kD;      // two buffers of kBc x kD
  T* s_v = s_k + 2 * kBc * kD;  // two buffers of kBc x kD

  const int q_tiles = static_cast<int>((a.seq_q + kBr - 1) / kBr);
  // The causal mask makes late query tiles the heaviest: they start first.
  const int mt = q_tiles - 1 - static_cast<int>(blockIdx.x % q_tiles);
  const std::int64_t bh = blockIdx.x / q_tiles;
  const std::int64_t h = bh % a.heads;
  const std::int64_t b = bh / a.heads;
  const std::int64_t kvh = h / (a.heads / a.kv_heads);
  const std::int64_t m0 = static_cast<std::int64_t>(mt) * kBr;
  const std::int64_t offset = a.seq_kv - a.seq_q;  // query row i sits at key i + offset
  const int group = threadIdx.x / 128;             // the warpgroup: rows 64 * group on
  const int lane = threadIdx.x % 32;
  const int g = lane >> 2, t = lane & 3;

  const int kv_tiles = static_cast<int>((a.seq_kv + kBc - 1) / kBc);
  int tile_begin = 0, tile_end = kv_tiles;
  if (a.causal) {
    const std::int64_t last_key = min_index(m0 + kBr, a.seq_q) - 1 + offset;
    tile_end = last_key < 0 ? 0 : static_cast<int>(min_index(kv_tiles, last_key / kBc + 1));
  }
  if (a.window_left >= 0) {
    const std::int64_t first_key = max_index(0, m0 + offset - a.window_left);
    tile_begin = static_cast<int>(min_index(first_key / kBc, kv_tiles));
  }

  const std::int64_t q_stride = a.heads * kD, kv_stride = a.kv_heads * kD;
  const T* q = static_cast<const T*>(a.q) + (b * a.seq_q * a.heads + h) * kD;
  const T* k = static_cast<const T*>(a.k) + (b * a.seq_kv * a.kv_heads + kvh) * kD;
  const T* v = static_cast<const T*>(a.v) + (b * a.seq_kv * a.kv_heads + kvh) * kD;

  load_tile<T, kD, kBr>(s_q, q + m0 * q_stride, q_stride, a.seq_q - m0);
  if (tile_begin < tile_end) {
    const std::int64_t n0 = static_cast<std::int64_t>(tile_begin) * kBc;
    load_tile<T, kD, kBc>(s_k, k + n0 * kv_stride, kv_stride, a.seq_kv - n0);
    load_tile<T, kD, kBc>(s_v, v + n0 * kv_stride, kv_stride, a.seq_kv - n0);
  }
  commit_copies();

  const float score_scale = kSoftcap ? a.sm_scale / a.softcap : a.sm_scale * kLog2e;
  // A window wider than any sequence the launcher admits is no window.
  const int window = a.window_left < 0 || a.window_left > (1 << 30) ? -1 : static_cast<int>(a.window_left);
  // This thread's rows: row0 and row0 + 8 (the accumulator layout).
  const std::int64_t row0 = m0 + (threadIdx.x / 32) * 16 + g;
  constexpr std::uint32_t kRowGroupBytes = 8 * 128;       // 8 rows of a 64-column panel
  constexpr std::uint32_t kPanelBytes = kBc * 128;        // a key or value tile's panel
  float o[kD / 2];
  float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) o[i] = 0.f;

  for (int tile = tile_begin; tile < tile_end; ++tile) {
    const int buf = (tile - tile_begin) & 1;
    if (tile + 1 < tile_end) {
      const std::int64_t n1 = static_cast<std::int64_t>(tile + 1) * kBc;
      load_tile<T, kD, kBc>(s_k + (buf ^ 1) * kBc * kD, k + n1 * kv_stride, kv_stride, a.seq_kv - n1);
      load_tile<T, kD, kBc>(s_v + (buf ^ 1) * kBc * kD, v + n1 * kv_stride, kv_stride, a.seq_kv - n1);
    }
    commit_copies();
    wait_copies<1>();
    fence_copies_for_wgmma();
    __syncthreads();
    const T* sk = s_k + buf * kBc * kD;
    const T* sv = s_v + buf * kBc * kD;

    // S = Q K^T: this warpgroup's 64 rows against the tile's 128 keys, 16 head dims a step.
    float s[64];
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      const int panel = ks / 4, column = (ks % 4) * 16;
      const std::uint64_t qd =
          swizzled_descriptor(s_q + panel * kBr * 64 + group * 64 * 64 + column, 16, kRowGroupBytes);
      const std::uint64_t kd = swizzled_descriptor(sk + panel * kBc * 64 + column, 16, kRowGroupBytes);
      wgmma_m64n128k16_ss<T>(s, qd, kd, ks > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(s);

    // Scores in base 2, masked where the tile crosses a mask's edge; then the online softmax
    // per row (a quad of lanes shares a row).
    const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
    const bool edge = n0 + kBc > a.seq_kv || (a.causal && n0 + kBc - 1 > m0 + offset) ||
                      (a.window_left >= 0 && n0 < m0 + kBr - 1 + offset - a.window_left);
    // The mask in 32-bit offsets from the tile's first key (the launcher bounds the lengths).
    const int keys_left = static_cast<int>(min_index(a.seq_kv - n0, kBc));
    const int diag0 = static_cast<int>(row0 + offset - n0);  // this thread's first row's diagonal
#pragma unroll
    for (int nt = 0; nt < kBc / 8; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[nt * 4 + e] * score_scale;
        if constexpr (kSoftcap) x = a.softcap * tanhf(x) * kLog2e;
        if (edge) {
          const int j = nt * 8 + 2 * t + (e & 1);
          const int diag = diag0 + (e >> 1) * 8;
          const bool visible = j < keys_left && (!a.causal || j <= diag) && (window < 0 || j >= diag - window);
          if (!visible) x = kNegInf;
        }
        s[nt * 4 + e] = x;
      }
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float mx = kNegInf;
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt * 4 + 2 * half], s[nt * 4 + 2 * half + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m_run[half], mx);
      const float scale = exp2_rel(m_run[half], m_new);
      m_run[half] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt) {
        s[nt * 4 + 2 * half] = exp2_rel(s[nt * 4 + 2 * half], m_new);
        s[nt * 4 + 2 * half + 1] = exp2_rel(s[nt * 4 + 2 * half + 1], m_new);
        sum += s[nt * 4 + 2 * half] + s[nt * 4 + 2 * half + 1];
      }
      l_run[half] = l_run[half] * scale + sum;  // this lane's part; the quad sums at the end
#pragma unroll
      for (int i = 0; i < kD / 8; ++i) {
        o[i * 4 + 2 * half] *= scale;
        o[i * 4 + 2 * half + 1] *= scale;
      }
    }

    // O += P V, 16 keys a step: P's fragment is the score accumulator's layout, packed in pairs.
    std::uint32_t p[kBc / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      p[kk][0] = pack2<T>(s[8 * kk + 0], s[8 * kk + 1]);
      p[kk][1] = pack2<T>(s[8 * kk + 2], s[8 * kk + 3]);
      p[kk][2] = pack2<T>(s[8 * kk + 4], s[8 * kk + 5]);
      p[kk][3] = pack2<T>(s[8 * kk + 6], s[8 * kk + 7]);
    }
    fence_registers(o);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      const std::uint64_t vd = swizzled_descriptor(sv + kk * 16 * 64, kPanelBytes, kRowGroupBytes);
      wgmma_m64k16_rs<T, kD>(o, p[kk], vd, true);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(o);
    __syncthreads();  // every warpgroup is done with this buffer before the next tile's copy fills it
  }
  wait_copies<0>();

  T* out = static_cast<T*>(a.o) + (b * a.seq_q * a.heads + h) * kD;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float l = l_run[half];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const std::int64_t i = row0 + half * 8;
    if (i >= a.seq_q) continue;
    const float inv = l > 0.f ? 1.f / l : 0.f;
    T* row = out + i * q_stride;
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt) {
      *reinterpret_cast<std::uint32_t*>(row + dt * 8 + 2 * t) =
          pack2<T>(o[dt * 4 + 2 * half] * inv, o[dt * 4 + 2 * half + 1] * inv);
    }
    if (a.lse != nullptr && t == 0) {
      a.lse[(b * a.heads + h) * a.seq_q + i] = l > 0.f ? (m_run[half] + log2f(l)) * kLn2 : kNegInf;
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on sm_90a machine code only
#endif
}

template <class T, int kD, bool kSoftcap>
void launch_typed(const AttentionArgs& a, unsigned blocks, NativeStream stream) {
  constexpr int kSmem = (kBr + 4 * kBc) * kD * static_cast<int>(sizeof(T)) + 1024;
  allow_shared_memory<prefill_wgmma_kernel<T, kD, kSoftcap>, kSmem>();
  prefill_wgmma_kernel<T, kD, kSoftcap><<<blocks, kThreads, kSmem, stream>>>(a);
}

template <class T>
void launch_for_type(const AttentionArgs& a, unsigned blocks, NativeStream stream) {
  const bool softcap = a.softcap > 0.f;
  if (a.head_dim == 64) {
    softcap ? launch_typed<T, 64, true>(a, blocks, stream) : launch_typed<T, 64, false>(a, blocks, stream);
  } else {
    softcap ? launch_typed<T, 128, true>(a, blocks, stream) : launch_typed<T, 128, false>(a, blocks, stream);
  }
}

}  // namespace

bool attention_wgmma_built() {
#if defined(TILEOPS_CUDA_SM90A)
  return true;
#else
  return false;
#endif
}

bool attention_wgmma_serves(const AttentionArgs& a) {
  return attention_tensor_cores_serve(90, a.dtype, a.head_dim, {a.q, a.k, a.v, a.o});
}

void launch_attention_wgmma(const AttentionArgs& a, void* stream) {
  if (a.batch == 0 || a.seq_q == 0 || a.heads == 0) return;
  if (a.seq_q > (1 << 30) || a.seq_kv > (1 << 30)) {
    throw ValueError("gpu attention: sequences of " + std::to_string(a.seq_q) + " queries and " +
                     std::to_string(a.seq_kv) + " keys; at most 2^30 of each are served");
  }
  const std::int64_t blocks = ceil_div(a.seq_q, kBr) * a.heads * a.batch;
  if (blocks > 0x7fffffff) throw ValueError("gpu attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const auto grid = static_cast<unsigned>(blocks);
  if (a.dtype == DType::bfloat16) launch_for_type<bf16>(a, grid, native_stream(stream));
  else launch_for_type<f16>(a, grid, native_stream(stream));
  check_launch("gqa_attention_wgmma");
}

}  // namespace tileops::gpu
