// Dense prefill attention on tensor cores (FlashAttention-2's schedule), CUDA sm_80 and later
// (TILEOPS_CUDA_KERNEL_SOURCES: only nvcc compiles it),
// float16 and bfloat16, head dim 64 or 128. A block of 4 warps serves 128 query rows of one
// (sequence, head), 32 rows a warp (two MMA row tiles sharing every key and value fragment a
// warp reads from shared memory), and walks the key tiles of 64 the mask leaves: the next
// tile's keys and values are copied to shared memory (cp.async) while this one is computed;
// S = Q K^T and O += P V run as m16n8k16 MMAs with float accumulators, fragments read with
// ldmatrix from tiles whose 16-byte chunks are XOR-swizzled by row, so that the eight rows an
// ldmatrix reads fall in distinct banks. P stays in registers between the two products.
#include "attention_prefill_mma.cuh"

#include <cmath>

#include "launch.cuh"
#include "attention_tile.cuh"
#include "mma_sm80.cuh"

namespace tileops::gpu {

namespace {

constexpr int kBr = 128;  // query rows per block
constexpr int kBc = 64;   // keys per tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
// The device helpers exist where the kernel has a body: sm_80 and later (and the host pass).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
constexpr int kRowTiles = kBr / kWarps / 16;  // MMA row tiles of 16 a warp holds
using namespace attention_tile;

// Copies `rows` rows of kD elements, row r from src + r * stride (rows at or past `valid_rows`
// zero-filled), into a swizzled tile.
template <class T, int kD>
__device__ __forceinline__ void load_tile(T* tile, const T* src, std::int64_t stride, int rows, std::int64_t valid_rows) {
  constexpr int kChunks = kD / 8;
  for (int idx = threadIdx.x; idx < rows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool valid = r < valid_rows;
    copy16_async(tile + swizzled<kD>(r, c), valid ? src + r * stride + c * 8 : src, valid);
  }
}

#endif

template <class T, int kD, bool kSoftcap>
__global__ void __launch_bounds__(kThreads, 2) prefill_mma_kernel(AttentionArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char smem[];
  T* s_q = reinterpret_cast<T*>(smem);
  T* s_k = s_q + kBr * kD;      // two buffers of kBc x kD
  T* s_v = s_k + 2 * kBc * kD;  // two buffers of kBc x kD

  const PrefillBlock<T, kD, kBr, kBc> block(a);
  const auto [b, h, m0, offset, tile_begin, tile_end, q_stride, kv_stride, q, k, v] = block;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2;

  load_tile<T, kD>(s_q, q + m0 * q_stride, q_stride, kBr, a.seq_q - m0);
  if (tile_begin < tile_end) {
    const std::int64_t n0 = static_cast<std::int64_t>(tile_begin) * kBc;
    load_tile<T, kD>(s_k, k + n0 * kv_stride, kv_stride, kBc, a.seq_kv - n0);
    load_tile<T, kD>(s_v, v + n0 * kv_stride, kv_stride, kBc, a.seq_kv - n0);
  }
  commit_copies();

  const float scale = fold_scale<kSoftcap>(a);
  const int window = window_of(a);
  // This lane's rows: row0 + 16 * tile + 8 * half for tile < kRowTiles, half < 2.
  const std::int64_t row0 = m0 + warp * 16 * kRowTiles + g;
  float o[kRowTiles][kD / 8][4];
  float m_run[kRowTiles][2], l_run[kRowTiles][2];
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r) {
#pragma unroll
    for (int i = 0; i < kD / 8; ++i) o[r][i][0] = o[r][i][1] = o[r][i][2] = o[r][i][3] = 0.f;
    m_run[r][0] = m_run[r][1] = kNegInf;
    l_run[r][0] = l_run[r][1] = 0.f;
  }

  for (int tile = tile_begin; tile < tile_end; ++tile) {
    const int buf = (tile - tile_begin) & 1;
    if (tile + 1 < tile_end) {
      const std::int64_t n1 = static_cast<std::int64_t>(tile + 1) * kBc;
      load_tile<T, kD>(s_k + (buf ^ 1) * kBc * kD, k + n1 * kv_stride, kv_stride, kBc, a.seq_kv - n1);
      load_tile<T, kD>(s_v + (buf ^ 1) * kBc * kD, v + n1 * kv_stride, kv_stride, kBc, a.seq_kv - n1);
    }
    commit_copies();
    wait_copies<1>();
    __syncthreads();
    const T* sk = s_k + buf * kBc * kD;
    const T* sv = s_v + buf * kBc * kD;

    // S = Q K^T for this warp's rows and the tile's 64 keys; each key fragment serves every row
    // tile, the query fragments come from shared memory.
    float s[kRowTiles][kBc / 8][4];
#pragma unroll
    for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
      for (int i = 0; i < kBc / 8; ++i) s[r][i][0] = s[r][i][1] = s[r][i][2] = s[r][i][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      std::uint32_t qf[kRowTiles][4];
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        const int row = (warp * kRowTiles + r) * 16 + (lane & 15);
        ldmatrix_x4(qf[r], s_q + swizzled<kD>(row, ks * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int np = 0; np < kBc / 16; ++np) {
        std::uint32_t kf[4];
        const int key = np * 16 + (lane & 7) + ((lane >> 4) << 3);
        ldmatrix_x4(kf, sk + swizzled<kD>(key, ks * 2 + ((lane >> 3) & 1)));
#pragma unroll
        for (int r = 0; r < kRowTiles; ++r) {
          mma<T>(s[r][2 * np], qf[r], kf[0], kf[1]);
          mma<T>(s[r][2 * np + 1], qf[r], kf[2], kf[3]);
        }
      }
    }

    // Scores capped (with a soft cap), masked where the tile crosses a mask's edge; then the online
    // softmax, which scales them into base 2.
    const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
    const bool edge = block.crosses_mask_edge(a, tile);
    // The mask in 32-bit offsets from the tile's first key (the launcher bounds the lengths).
    const int keys_left = static_cast<int>(min_index(a.seq_kv - n0, kBc));
    const int diag0 = static_cast<int>(row0 + offset - n0);  // this lane's first row's diagonal
#pragma unroll
    for (int r = 0; r < kRowTiles; ++r) {
      cap_and_mask<kSoftcap>(s[r], a, edge, keys_left, diag0 + r * 16, window);
      fold_into_softmax(s[r], scale, o[r], m_run[r], l_run[r]);
    }

    // O += P V, P taken from the score registers as A fragments; each value fragment serves
    // every row tile.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      std::uint32_t pf[kRowTiles][4];
#pragma unroll
      for (int r = 0; r < kRowTiles; ++r) {
        pf[r][0] = pack2<T>(s[r][2 * kk][0], s[r][2 * kk][1]);
        pf[r][1] = pack2<T>(s[r][2 * kk][2], s[r][2 * kk][3]);
        pf[r][2] = pack2<T>(s[r][2 * kk + 1][0], s[r][2 * kk + 1][1]);
        pf[r][3] = pack2<T>(s[r][2 * kk + 1][2], s[r][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kD / 16; ++dp) {
        std::uint32_t vf[4];
        const int key = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
        ldmatrix_x4_trans(vf, sv + swizzled<kD>(key, dp * 2 + (lane >> 4)));
#pragma unroll
        for (int r = 0; r < kRowTiles; ++r) {
          mma<T>(o[r][2 * dp], pf[r], vf[0], vf[1]);
          mma<T>(o[r][2 * dp + 1], pf[r], vf[2], vf[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with this buffer before the next tile's copy fills it
  }
  wait_copies<0>();

#pragma unroll
  for (int r = 0; r < kRowTiles; ++r) store_rows<T, kD>(a, block, row0 + r * 16, o[r], m_run[r], l_run[r]);
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on compute capability 8.0 and later only
#endif
}

}  // namespace

void launch_attention_mma(const AttentionArgs& a, void* stream) {
  const auto launch = [&](auto type, auto d, auto softcap, unsigned grid, NativeStream s) {
    using T = decltype(type);
    constexpr int kD = decltype(d)::value;
    constexpr auto kernel = prefill_mma_kernel<T, kD, decltype(softcap)::value>;
    constexpr int kSmem = (kBr + 4 * kBc) * kD * static_cast<int>(sizeof(T));
    allow_shared_memory<kernel, kSmem>();
    kernel<<<grid, kThreads, kSmem, s>>>(a);
  };
  attention_tile::launch_prefill<kBr>(a, stream, "gqa_attention", launch);
}

}  // namespace tileops::gpu
