// GEMM for every shape and transposition: d[m, n] = op(a) · op(b), float32 accumulation. Each
// block computes kBM x kBN tiles of d (looping over the tiles a capped grid leaves) through
// k-tiles of kTileK: the next k-tile of a and b is read from global memory into registers
// while the current one, in shared memory, is computed, then stored into the other of two
// shared buffers, one barrier per k-tile. Loads are bounds-checked, zero-filling the tails.
//
// Two ways to compute a k-tile, the same tiles and block size (so one launch serves both):
// - FMA (every target): a 16 x 16 grid of threads, each with (kBM / 16) x (kBN / 16) sums in
//   registers, from operands converted to float in shared memory. No warp operations, so
//   any warp width works.
// - MFMA (the HIP device pass for gfx908, gfx90a, gfx940: matrix cores, wave64): four waves,
//   each with a (kBM / 2) x (kBN / 2) quarter of the tile as 32 x 32 matrix-core products,
//   from operands kept in their own type in shared memory.
//
// Tiles: 128 x 128 where those tiles alone give every multiprocessor a block (64 sums per
// thread reuse each operand read from shared memory 8 times; about 210 registers on sm_90 and
// 256 VGPRs on gfx906, within what 256 threads may each use), else 64 x 64 (four times the
// blocks for smaller products). kTileK = 16 keeps two float buffers of both operands (33 KiB)
// within 48 KiB, the most static shared memory CUDA gives a block, and is a whole number of
// steps of every MFMA used (k of 2, 4 or 8). Neither size is tuned yet.
#include "../host/launchers.hpp"
#include "launch.cuh"

#if defined(TILEOPS_GPU_HIP) && (defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__))
#define TILEOPS_TILED_GEMM_MFMA 1
#endif

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kTileK = 16;

// One k-tile of an operand in registers: kRows x kTileK elements in (row, k) coordinates, row
// being i of a or j of b, read from a matrix stored [rows, k] (kKContiguous) or [k, rows].
// Consecutive threads read consecutive addresses of the stored layout.
template <class T, int kRows, bool kKContiguous>
struct OperandTile {
  static constexpr int kPerThread = kRows * kTileK / kThreads;
  static_assert(kPerThread * kThreads == kRows * kTileK);
  T v[kPerThread];

  __device__ static int row_of(int e) {
    const int idx = static_cast<int>(threadIdx.x) + e * kThreads;
    return kKContiguous ? idx / kTileK : idx % kRows;
  }
  __device__ static int k_of(int e) {
    const int idx = static_cast<int>(threadIdx.x) + e * kThreads;
    return kKContiguous ? idx % kTileK : idx / kRows;
  }

  __device__ void load(const T* __restrict__ p, std::int64_t rows, std::int64_t k, std::int64_t row0,
                       std::int64_t k0) {
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) {
      const std::int64_t r = row0 + row_of(e);
      const std::int64_t c = k0 + k_of(e);
      v[e] = r < rows && c < k ? p[kKContiguous ? r * k + c : c * rows + r] : T{};
    }
  }

  // Into shared memory laid out by Layout::index(row, k), as Layout's element type.
  template <class Layout, class S>
  __device__ void store(S* shared) const {
#pragma unroll
    for (int e = 0; e < kPerThread; ++e) shared[Layout::index(row_of(e), k_of(e))] = Layout::convert(v[e]);
  }
};

// Shared memory of an operand for the FMA path: float, k-major (the rows of one k contiguous),
// padded so that a row stays 16-byte aligned.
template <int kRows>
struct FmaLayout {
  static constexpr int kStride = kRows + 4;
  static constexpr int kSize = kTileK * kStride;
  __device__ static int index(int row, int k) { return k * kStride + row; }
  template <class T>
  __device__ static float convert(T v) {
    return to_float(v);
  }
};

// The FMA path: thread (ty, tx) of a 16 x 16 grid holds rows {h * kBM / 2 + ty * kTM / 2 + i}
// and columns {h * kBN / 2 + tx * kTN / 2 + j} (h = 0, 1): split in two halves so that each
// thread reads its operands as two packs and a warp's packs of b fall on distinct banks.
template <class T, int kBM, int kBN>
struct FmaTile {
  static constexpr int kTM = kBM / 16;
  static constexpr int kTN = kBN / 16;
  using LayoutA = FmaLayout<kBM>;
  using LayoutB = FmaLayout<kBN>;
  using Shared = float;
  float acc[kTM][kTN] = {};

  __device__ static int ty() { return static_cast<int>(threadIdx.x) / 16; }
  __device__ static int tx() { return static_cast<int>(threadIdx.x) % 16; }
  __device__ static int row(int i) { return (i / (kTM / 2)) * (kBM / 2) + ty() * (kTM / 2) + i % (kTM / 2); }
  __device__ static int col(int j) { return (j / (kTN / 2)) * (kBN / 2) + tx() * (kTN / 2) + j % (kTN / 2); }

  __device__ void accumulate(const float* sa, const float* sb) {
    // Four k at a time: unrolled over all sixteen, HIP's clang hoists every k's operands and
    // spills at 128 x 128 on gfx906 and gfx1030.
#pragma unroll 4
    for (int kk = 0; kk < kTileK; ++kk) {
      float x[kTM], y[kTN];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const auto pa = load_pack<kTM / 2>(sa + LayoutA::index(row(h * (kTM / 2)), kk));
        const auto pb = load_pack<kTN / 2>(sb + LayoutB::index(col(h * (kTN / 2)), kk));
#pragma unroll
        for (int e = 0; e < kTM / 2; ++e) x[h * (kTM / 2) + e] = pa.v[e];
#pragma unroll
        for (int e = 0; e < kTN / 2; ++e) y[h * (kTN / 2) + e] = pb.v[e];
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(x[i], y[j], acc[i][j]);
      }
    }
  }

  __device__ void store(T* __restrict__ d, std::int64_t m, std::int64_t n, std::int64_t row0, std::int64_t col0) const {
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      const std::int64_t r = row0 + row(i);
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        const std::int64_t c = col0 + col(j);
        if (r < m && c < n) d[r * n + c] = store_as<T>(acc[i][j]);
      }
    }
  }
};

#if defined(TILEOPS_TILED_GEMM_MFMA)
using Floatx16 = float __attribute__((ext_vector_type(16)));
using Halfx4 = _Float16 __attribute__((ext_vector_type(4)));
using Shortx4 = short __attribute__((ext_vector_type(4)));
using Shortx2 = short __attribute__((ext_vector_type(2)));

// One 32 x 32 x kK matrix-core product per dtype. Lane l supplies row l % 32 of a (column of
// b) at k = (l / 32) * kPerLane + e, e < kPerLane; the sums are Floatx16 in the layout of
// MfmaTile::store.
template <class T>
struct Mfma;
template <>
struct Mfma<float> {
  static constexpr int kK = 2;
  static constexpr int kPerLane = 1;
  using Frag = float;
  __device__ static Floatx16 step(Frag a, Frag b, Floatx16 c) {
    return __builtin_amdgcn_mfma_f32_32x32x2f32(a, b, c, 0, 0, 0);
  }
};
template <>
struct Mfma<f16> {
  static constexpr int kK = 8;
  static constexpr int kPerLane = 4;
  using Frag = Halfx4;
  __device__ static Floatx16 step(Frag a, Frag b, Floatx16 c) {
    return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
  }
};
template <>
struct Mfma<bf16> {
#if defined(__gfx908__)
  // gfx908 has no bf16 "_1k" instructions: two bf16 per lane.
  static constexpr int kK = 4;
  static constexpr int kPerLane = 2;
  using Frag = Shortx2;
  __device__ static Floatx16 step(Frag a, Frag b, Floatx16 c) {
    return __builtin_amdgcn_mfma_f32_32x32x4bf16(a, b, c, 0, 0, 0);
  }
#else
  static constexpr int kK = 8;
  static constexpr int kPerLane = 4;
  using Frag = Shortx4;
  __device__ static Floatx16 step(Frag a, Frag b, Floatx16 c) {
    return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
  }
#endif
};

// Shared memory of an operand for the MFMA path: its own type, row-major (the k of one row
// contiguous, as a lane reads them), padded to keep a lane's elements aligned for one read
// while spreading rows over banks.
template <class T, int kRows>
struct MfmaLayout {
  static constexpr int kStride = kTileK + (sizeof(T) == 4 ? 1 : 4);
  static constexpr int kSize = kRows * kStride;
  __device__ static int index(int row, int k) { return row * kStride + k; }
  __device__ static T convert(T v) { return v; }
};

// The MFMA path: wave w (of four, wave64) computes rows (w / 2) * kBM / 2 and columns
// (w % 2) * kBN / 2 onwards, as (kBM / 64) x (kBN / 64) products of 32 x 32.
template <class T, int kBM, int kBN>
struct MfmaTile {
  static_assert(kWarpSize == 64 && kThreads == 4 * 64, "the MFMA path runs four waves of 64");
  static constexpr int kTI = kBM / 64;
  static constexpr int kTJ = kBN / 64;
  using Op = Mfma<T>;
  using LayoutA = MfmaLayout<T, kBM>;
  using LayoutB = MfmaLayout<T, kBN>;
  using Shared = T;
  Floatx16 acc[kTI][kTJ];

  __device__ MfmaTile() {
#pragma unroll
    for (int i = 0; i < kTI; ++i) {
#pragma unroll
      for (int j = 0; j < kTJ; ++j) acc[i][j] = Floatx16{};
    }
  }

  __device__ static int lane() { return static_cast<int>(threadIdx.x) % 64; }
  __device__ static int wave_row() { return static_cast<int>(threadIdx.x) / 64 / 2 * (kBM / 2); }
  __device__ static int wave_col() { return static_cast<int>(threadIdx.x) / 64 % 2 * (kBN / 2); }

  template <class Layout>
  __device__ static typename Op::Frag frag(const T* shared, int row, int k) {
    typename Op::Frag f;
    __builtin_memcpy(&f, shared + Layout::index(row, k), sizeof(f));
    return f;
  }

  __device__ void accumulate(const T* sa, const T* sb) {
    const int k_lane = lane() / 32 * Op::kPerLane;
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += Op::kK) {
      typename Op::Frag fa[kTI], fb[kTJ];
#pragma unroll
      for (int i = 0; i < kTI; ++i) fa[i] = frag<LayoutA>(sa, wave_row() + i * 32 + lane() % 32, kk + k_lane);
#pragma unroll
      for (int j = 0; j < kTJ; ++j) fb[j] = frag<LayoutB>(sb, wave_col() + j * 32 + lane() % 32, kk + k_lane);
#pragma unroll
      for (int i = 0; i < kTI; ++i) {
#pragma unroll
        for (int j = 0; j < kTJ; ++j) acc[i][j] = Op::step(fa[i], fb[j], acc[i][j]);
      }
    }
  }

  // Sum v of lane l is row 8 * (v / 4) + 4 * (l / 32) + v % 4, column l % 32 of its product.
  __device__ void store(T* __restrict__ d, std::int64_t m, std::int64_t n, std::int64_t row0, std::int64_t col0) const {
#pragma unroll
    for (int i = 0; i < kTI; ++i) {
#pragma unroll
      for (int j = 0; j < kTJ; ++j) {
        const std::int64_t c = col0 + wave_col() + j * 32 + lane() % 32;
#pragma unroll
        for (int v = 0; v < 16; ++v) {
          const std::int64_t r = row0 + wave_row() + i * 32 + 8 * (v / 4) + 4 * (lane() / 32) + v % 4;
          if (r < m && c < n) d[r * n + c] = store_as<T>(acc[i][j][v]);
        }
      }
    }
  }
};

template <class T, int kBM, int kBN>
using Tile = MfmaTile<T, kBM, kBN>;
#else
template <class T, int kBM, int kBN>
using Tile = FmaTile<T, kBM, kBN>;
#endif

// a is stored [m, k] unless kTransA ([k, m]); b is stored [k, n] unless kTransB ([n, k]).
template <class T, bool kTransA, bool kTransB, int kBM, int kBN>
__global__ void __launch_bounds__(kThreads)
    tiled_gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ d, std::int64_t m,
                      std::int64_t n, std::int64_t k) {
  using Compute = Tile<T, kBM, kBN>;
  using LayoutA = typename Compute::LayoutA;
  using LayoutB = typename Compute::LayoutB;
  using S = typename Compute::Shared;
  __shared__ __attribute__((aligned(16))) S sa[2][LayoutA::kSize];
  __shared__ __attribute__((aligned(16))) S sb[2][LayoutB::kSize];
  OperandTile<T, kBM, !kTransA> ta;
  OperandTile<T, kBN, kTransB> tb;
  const std::int64_t tiles_n = (n + kBN - 1) / kBN;
  const std::int64_t tiles = (m + kBM - 1) / kBM * tiles_n;
  const std::int64_t k_tiles = (k + kTileK - 1) / kTileK;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t row0 = tile / tiles_n * kBM;
    const std::int64_t col0 = tile % tiles_n * kBN;
    Compute compute;
    if (k_tiles > 0) {
      ta.load(a, m, k, row0, 0);
      tb.load(b, n, k, col0, 0);
      ta.template store<LayoutA>(sa[0]);
      tb.template store<LayoutB>(sb[0]);
      __syncthreads();
    }
    for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
      const int cur = static_cast<int>(kt & 1);
      const bool next = kt + 1 < k_tiles;
      if (next) {
        ta.load(a, m, k, row0, (kt + 1) * kTileK);
        tb.load(b, n, k, col0, (kt + 1) * kTileK);
      }
      compute.accumulate(sa[cur], sb[cur]);
      if (next) {
        ta.template store<LayoutA>(sa[cur ^ 1]);
        tb.template store<LayoutB>(sb[cur ^ 1]);
      }
      // The other buffer is written and this one read by every thread before either changes.
      __syncthreads();
    }
    compute.store(d, m, n, row0, col0);
  }
}

template <class T, bool kTransA, bool kTransB, int kBM, int kBN>
void launch_tiles(const TiledGemmArgs& args, NativeStream stream) {
  const std::int64_t tiles = ceil_div(args.m, kBM) * ceil_div(args.n, kBN);
  tiled_gemm_kernel<T, kTransA, kTransB, kBM, kBN><<<blocks_for(tiles, 1), kThreads, 0, stream>>>(
      static_cast<const T*>(args.a), static_cast<const T*>(args.b), static_cast<T*>(args.d), args.m, args.n, args.k);
}

template <class T, bool kTransA, bool kTransB>
void launch_layout(const TiledGemmArgs& args, NativeStream stream) {
  const bool large_fill = ceil_div(args.m, 128) * ceil_div(args.n, 128) >= std::max(args.sm_count, 1);
  if (large_fill) {
    launch_tiles<T, kTransA, kTransB, 128, 128>(args, stream);
  } else {
    launch_tiles<T, kTransA, kTransB, 64, 64>(args, stream);
  }
}

}  // namespace

void launch_tiled_gemm(const TiledGemmArgs& args, void* stream) {
  if (const auto reason = tiled_gemm_extent_refusal(args.m, args.n, args.k)) {
    throw ValueError("gpu kernel tiled_gemm: " + *reason);
  }
  if (args.m == 0 || args.n == 0) return;
  with_float_type(args.dtype, "tiled_gemm", [&](auto tag) {
    using T = decltype(tag);
    const NativeStream s = native_stream(stream);
    if (args.trans_a) {
      args.trans_b ? launch_layout<T, true, true>(args, s) : launch_layout<T, true, false>(args, s);
    } else {
      args.trans_b ? launch_layout<T, false, true>(args, s) : launch_layout<T, false, false>(args, s);
    }
  });
  check_launch("tiled_gemm");
}

}  // namespace tileops::gpu
