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
#include "attention_tile.cuh"
#include "mma_sm80.cuh"
#include "wgmma_sm90.cuh"

namespace tileops::gpu {

namespace {

constexpr int kBr = 128;  // query rows per block
constexpr int kBc = 128;  // keys per tile
constexpr int kThreads = 256;

#if defined(TILEOPS_HAS_WGMMA)
using namespace attention_tile;

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
#endif

template <class T, int kD, bool kSoftcap>
__global__ void __launch_bounds__(kThreads, 1) prefill_wgmma_kernel(AttentionArgs a) {
#if defined(TILEOPS_HAS_WGMMA)
  extern __shared__ unsigned char smem_raw[];
  // Swizzled tiles repeat every 1024 bytes and must start on such a boundary.
  T* s_q = reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  T* s_k = s_q + kBr * kD;      // two buffers of kBc x kD
  T* s_v = s_k + 2 * kBc * kD;  // two buffers of kBc x kD

  const PrefillBlock<T, kD, kBr, kBc> block(a);
  const auto [b, h, m0, offset, tile_begin, tile_end, q_stride, kv_stride, q, k, v] = block;
  const int group = threadIdx.x / 128;  // the warpgroup: rows 64 * group on

  load_tile<T, kD, kBr>(s_q, q + m0 * q_stride, q_stride, a.seq_q - m0);
  if (tile_begin < tile_end) {
    const std::int64_t n0 = static_cast<std::int64_t>(tile_begin) * kBc;
    load_tile<T, kD, kBc>(s_k, k + n0 * kv_stride, kv_stride, a.seq_kv - n0);
    load_tile<T, kD, kBc>(s_v, v + n0 * kv_stride, kv_stride, a.seq_kv - n0);
  }
  commit_copies();

  const float scale = fold_scale<kSoftcap>(a);
  const int window = window_of(a);
  // This thread's rows: row0 and row0 + 8 (the accumulator layout).
  const std::int64_t row0 = m0 + (threadIdx.x / 32) * 16 + (threadIdx.x % 32) / 4;
  constexpr std::uint32_t kRowGroupBytes = 8 * 128;       // 8 rows of a 64-column panel
  constexpr std::uint32_t kPanelBytes = kBc * 128;        // a key or value tile's panel
  float o[kD / 8][4];
  float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kD / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;

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
    float s[kBc / 8][4];
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

    // Scores capped (with a soft cap), masked where the tile crosses a mask's edge; then the online
    // softmax, which scales them into base 2.
    const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
    // The mask in 32-bit offsets from the tile's first key (the launcher bounds the lengths).
    const int keys_left = static_cast<int>(min_index(a.seq_kv - n0, kBc));
    const int diag0 = static_cast<int>(row0 + offset - n0);  // this thread's first row's diagonal
    cap_and_mask<kSoftcap>(s, a, block.crosses_mask_edge(a, tile), keys_left, diag0, window);
    fold_into_softmax(s, scale, o, m_run, l_run);

    // O += P V, 16 keys a step: P's fragment is the score accumulator's layout, packed in pairs.
    std::uint32_t p[kBc / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      p[kk][0] = pack2<T>(s[2 * kk][0], s[2 * kk][1]);
      p[kk][1] = pack2<T>(s[2 * kk][2], s[2 * kk][3]);
      p[kk][2] = pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      p[kk][3] = pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
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

  store_rows<T, kD>(a, block, row0, o, m_run, l_run);
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on sm_90a machine code only
#endif
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
  const auto launch = [&](auto type, auto d, auto softcap, unsigned grid, NativeStream s) {
    using T = decltype(type);
    constexpr int kD = decltype(d)::value;
    constexpr auto kernel = prefill_wgmma_kernel<T, kD, decltype(softcap)::value>;
    // The tiles, and room to round their start up to 1024 bytes.
    constexpr int kSmem = (kBr + 4 * kBc) * kD * static_cast<int>(sizeof(T)) + 1024;
    allow_shared_memory<kernel, kSmem>();
    kernel<<<grid, kThreads, kSmem, s>>>(a);
  };
  attention_tile::launch_prefill<kBr>(a, stream, "gqa_attention_wgmma", launch);
}

}  // namespace tileops::gpu
