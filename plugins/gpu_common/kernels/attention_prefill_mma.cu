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
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -INFINITY;

__device__ __forceinline__ float exp2_rel(float x, float max) { return max == kNegInf ? 0.f : exp2f(x - max); }

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

  const int q_tiles = static_cast<int>((a.seq_q + kBr - 1) / kBr);
  // The causal mask makes late query tiles the heaviest: they start first.
  const int mt = q_tiles - 1 - static_cast<int>(blockIdx.x % q_tiles);
  const std::int64_t bh = blockIdx.x / q_tiles;
  const std::int64_t h = bh % a.heads;
  const std::int64_t b = bh / a.heads;
  const std::int64_t kvh = h / (a.heads / a.kv_heads);
  const std::int64_t m0 = static_cast<std::int64_t>(mt) * kBr;
  const std::int64_t offset = a.seq_kv - a.seq_q;  // query row i sits at key i + offset
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, t = lane & 3;

  // The key tiles the block's rows see.
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

  load_tile<T, kD>(s_q, q + m0 * q_stride, q_stride, kBr, a.seq_q - m0);
  if (tile_begin < tile_end) {
    const std::int64_t n0 = static_cast<std::int64_t>(tile_begin) * kBc;
    load_tile<T, kD>(s_k, k + n0 * kv_stride, kv_stride, kBc, a.seq_kv - n0);
    load_tile<T, kD>(s_v, v + n0 * kv_stride, kv_stride, kBc, a.seq_kv - n0);
  }
  commit_copies();

  const float score_scale = kSoftcap ? a.sm_scale / a.softcap : a.sm_scale * kLog2e;
  // A window wider than any sequence the launcher admits is no window.
  const int window = a.window_left < 0 || a.window_left > (1 << 30) ? -1 : static_cast<int>(a.window_left);
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

    // Scores in base 2, masked where the tile crosses a mask's edge; then the online softmax
    // per row (a quad of lanes shares a row).
    const std::int64_t n0 = static_cast<std::int64_t>(tile) * kBc;
    const bool edge = n0 + kBc > a.seq_kv || (a.causal && n0 + kBc - 1 > m0 + offset) ||
                      (a.window_left >= 0 && n0 < m0 + kBr - 1 + offset - a.window_left);
    // The mask in 32-bit offsets from the tile's first key (the launcher bounds the lengths).
    const int keys_left = static_cast<int>(min_index(a.seq_kv - n0, kBc));
    const int diag0 = static_cast<int>(row0 + offset - n0);  // this lane's first row's diagonal
#pragma unroll
    for (int r = 0; r < kRowTiles; ++r) {
#pragma unroll
      for (int nt = 0; nt < kBc / 8; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = s[r][nt][e] * score_scale;
          if constexpr (kSoftcap) x = a.softcap * tanhf(x) * kLog2e;
          if (edge) {
            const int j = nt * 8 + 2 * t + (e & 1);
            const int diag = diag0 + r * 16 + (e >> 1) * 8;
            const bool visible = j < keys_left && (!a.causal || j <= diag) && (window < 0 || j >= diag - window);
            if (!visible) x = kNegInf;
          }
          s[r][nt][e] = x;
        }
      }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float mx = kNegInf;
#pragma unroll
        for (int nt = 0; nt < kBc / 8; ++nt) mx = fmaxf(mx, fmaxf(s[r][nt][2 * half], s[r][nt][2 * half + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m_run[r][half], mx);
        const float scale = exp2_rel(m_run[r][half], m_new);
        m_run[r][half] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int nt = 0; nt < kBc / 8; ++nt) {
          s[r][nt][2 * half] = exp2_rel(s[r][nt][2 * half], m_new);
          s[r][nt][2 * half + 1] = exp2_rel(s[r][nt][2 * half + 1], m_new);
          sum += s[r][nt][2 * half] + s[r][nt][2 * half + 1];
        }
        l_run[r][half] = l_run[r][half] * scale + sum;  // this lane's part; the quad sums at the end
#pragma unroll
        for (int i = 0; i < kD / 8; ++i) {
          o[r][i][2 * half] *= scale;
          o[r][i][2 * half + 1] *= scale;
        }
      }
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

  T* out = static_cast<T*>(a.o) + (b * a.seq_q * a.heads + h) * kD;
#pragma unroll
  for (int r = 0; r < kRowTiles; ++r) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float l = l_run[r][half];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const std::int64_t i = row0 + r * 16 + half * 8;
      if (i >= a.seq_q) continue;
      const float inv = l > 0.f ? 1.f / l : 0.f;
      T* row = out + i * q_stride;
#pragma unroll
      for (int dt = 0; dt < kD / 8; ++dt) {
        *reinterpret_cast<std::uint32_t*>(row + dt * 8 + 2 * t) =
            pack2<T>(o[r][dt][2 * half] * inv, o[r][dt][2 * half + 1] * inv);
      }
      if (a.lse != nullptr && t == 0) {
        a.lse[(b * a.heads + h) * a.seq_q + i] = l > 0.f ? (m_run[r][half] + log2f(l)) * kLn2 : kNegInf;
      }
    }
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // the launcher runs this kernel on compute capability 8.0 and later only
#endif
}

template <class T, int kD, bool kSoftcap>
void launch_typed(const AttentionArgs& a, unsigned blocks, NativeStream stream) {
  constexpr int kSmem = (kBr + 4 * kBc) * kD * static_cast<int>(sizeof(T));
  allow_shared_memory<prefill_mma_kernel<T, kD, kSoftcap>, kSmem>();
  prefill_mma_kernel<T, kD, kSoftcap><<<blocks, kThreads, kSmem, stream>>>(a);
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

void launch_attention_mma(const AttentionArgs& a, void* stream) {
  if (a.seq_q > (1 << 30) || a.seq_kv > (1 << 30)) {
    throw ValueError("gpu attention: sequences of " + std::to_string(a.seq_q) + " queries and " +
                     std::to_string(a.seq_kv) + " keys; at most 2^30 of each are served");
  }
  const std::int64_t blocks = ceil_div(a.seq_q, kBr) * a.heads * a.batch;
  if (blocks > 0x7fffffff) throw ValueError("gpu attention: " + std::to_string(blocks) + " blocks exceed the grid");
  const auto grid = static_cast<unsigned>(blocks);
  if (a.dtype == DType::bfloat16) launch_for_type<bf16>(a, grid, native_stream(stream));
  else launch_for_type<f16>(a, grid, native_stream(stream));
  check_launch("gqa_attention");
}

}  // namespace tileops::gpu
