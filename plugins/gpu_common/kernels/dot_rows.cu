// GEMM for a few rows of a against a matrix stored [n, k] (decode against linear-layer
// weights): d[i, j] = sum_p a[i, p] * b[j, p]. Such products are bound by reading b once, so
// each thread streams rows of b with 16-byte loads, all rows of a (at most kMaxDotRows, small
// enough to stay in L1 and L2) against them, and keeps the sums in registers until one
// reduction at the end. float32 accumulation for every dtype. Two shapes of the work: one warp
// over a few rows of b (float32, and rows no 16-byte pack divides), or a block over two rows
// of b (16-bit rows in packs).
//
// In the warp kernel every lane keeps 4 packs of b (64 bytes) in flight, as kCols rows times
// kUnroll packs: more rows per warp reuse each load of a more often (what many rows of a need),
// fewer spread the rows of b over more warps (finer balance, what one row of a needs). The block
// kernel keeps four packs of each of its rows in flight: on an H100 it read bfloat16 weights
// [4096, 14336] at 80-88% of the copy rate for one row of a where the warp kernel read at 55%,
// and was ahead at every Llama-3.1-8B decode shape from 1 to 8 rows (bench/gpu/gemv_harness.cu).
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kPacksInFlight = 4;

// One step of a thread's share: kUnroll packs of each of the kCols rows of b, `stride` packs
// apart from p0, all loaded before any is used, against the same packs of every row of a.
template <class T, int kVec, int kRows, int kCols, int kUnroll>
__device__ __forceinline__ void accumulate_packs(const T* __restrict__ a, const T* const (&rows)[kCols], int m,
                                                 std::int64_t k, std::int64_t packs, std::int64_t p0,
                                                 std::int64_t stride, float (&acc)[kRows][kCols]) {
  Pack<T, kVec> w[kUnroll][kCols];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t p = p0 + u * stride;
    if (p < packs) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) w[u][c] = load_pack<kVec>(rows[c] + p * kVec);
    }
  }
  // Guards rather than breaks: a loop that can exit early cannot be unrolled by every
  // compiler (HIP's clang refuses), and these must be, to keep acc in registers.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t p = p0 + u * stride;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (p >= packs || r >= m) continue;
      const Pack<T, kVec> x = load_pack<kVec>(a + r * k + p * kVec);
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const float xv = to_float(x.v[e]);
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r][c] += xv * to_float(w[u][c].v[e]);
      }
    }
  }
}

template <class T, int kVec, int kRows, int kCols>
__global__ void __launch_bounds__(kThreads)
    dot_rows_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ d, int m, std::int64_t n,
                    std::int64_t k) {
  constexpr int kUnroll = kPacksInFlight / kCols;  // packs of each row of b loaded before use
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int warps_per_block = static_cast<int>(blockDim.x) / kWarpSize;
  const std::int64_t warp = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / kWarpSize;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const std::int64_t packs = k / kVec;
  for (std::int64_t j0 = warp * kCols; j0 < n; j0 += warps * kCols) {
    const T* rows[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) rows[c] = b + (j0 + c < n ? j0 + c : n - 1) * k;  // a tail reads a valid row
    float acc[kRows][kCols] = {};
    for (std::int64_t p0 = lane; p0 < packs; p0 += static_cast<std::int64_t>(kWarpSize) * kUnroll) {
      accumulate_packs<T, kVec, kRows, kCols, kUnroll>(a, rows, m, k, packs, p0, kWarpSize, acc);
    }
    // Every lane ends with every sum; lane r * kCols + c stores sum (r, c).
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const float sum = warp_reduce(acc[r][c], Add{});
        if (lane == r * kCols + c && r < m && j0 + c < n) d[r * n + j0 + c] = store_as<T>(sum);
      }
    }
  }
}

// The same products with a block's threads sharing kCols rows of b (each thread every
// kBlock-th pack of them, kUnroll packs of each row loaded before use), reduced across the
// block at the end: where b has few rows and long ones (a down projection, n = 4096 against
// k = 14336), one warp a row leaves each warp a long serial chain of loads, and a block a few
// rows spreads it.
template <class T, int kVec, int kRows, int kCols, int kBlock, int kUnroll>
__global__ void __launch_bounds__(kBlock)
    dot_rows_block_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ d, int m,
                          std::int64_t n, std::int64_t k) {
  __shared__ float scratch[kRows * kCols * kMaxWarps];
  const std::int64_t packs = k / kVec;
  for (std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kCols; j0 < n;
       j0 += static_cast<std::int64_t>(gridDim.x) * kCols) {
    const T* rows[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) rows[c] = b + (j0 + c < n ? j0 + c : n - 1) * k;  // a tail reads a valid row
    float acc[kRows][kCols] = {};
    for (std::int64_t p0 = threadIdx.x; p0 < packs; p0 += static_cast<std::int64_t>(kBlock) * kUnroll) {
      accumulate_packs<T, kVec, kRows, kCols, kUnroll>(a, rows, m, k, packs, p0, kBlock, acc);
    }
    float (&sums)[kRows * kCols] = reinterpret_cast<float (&)[kRows * kCols]>(acc);
    block_reduce_each(sums, Add{}, 0.0f, scratch);
    // Every thread ends with every sum; thread r * kCols + c stores sum (r, c).
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        if (threadIdx.x == static_cast<unsigned>(r * kCols + c) && r < m && j0 + c < n) {
          d[r * n + j0 + c] = store_as<T>(acc[r][c]);
        }
      }
    }
  }
}

template <class T, int kVec, int kRows, int kCols>
void launch_shape(const DotRowsArgs& a, NativeStream stream) {
  const std::int64_t warp_tasks = ceil_div(a.n, kCols);
  const int warps_per_block = kThreads / static_cast<int>(warp_threads(1, a.warp_size));
  dot_rows_kernel<T, kVec, kRows, kCols>
      <<<blocks_for(warp_tasks, warps_per_block, std::max<std::int64_t>(a.sm_count, 1) * 64), kThreads, 0, stream>>>(
          static_cast<const T*>(a.a), static_cast<const T*>(a.b), static_cast<T*>(a.d), static_cast<int>(a.m), a.n,
          a.k);
}

template <class T, int kVec, int kRows>
void launch_rows(const DotRowsArgs& a, NativeStream stream) {
  if constexpr (kVec == 1) {
    launch_shape<T, 1, kRows, 1>(a, stream);
  } else {
    // As many rows of b per warp as rows of a need, while every multiprocessor still gets two
    // blocks of work.
    const std::int64_t warps_per_block = kThreads / warp_threads(1, a.warp_size);
    const std::int64_t wanted_blocks = 2 * std::max<std::int64_t>(a.sm_count, 1);
    const auto fills = [&](std::int64_t cols) { return ceil_div(a.n, warps_per_block * cols) >= wanted_blocks; };
    if constexpr (kRows > 4) {
      if (fills(4)) return launch_shape<T, kVec, kRows, 4>(a, stream);
    }
    if constexpr (kRows > 2) {
      if (fills(2)) return launch_shape<T, kVec, kRows, 2>(a, stream);
    }
    launch_shape<T, kVec, kRows, 1>(a, stream);
  }
}

// 16-bit rows of b in 16-byte packs: a block over one row of b for one row of a (each load of a
// then serves one row of b, and twice the blocks spread the rows), over two for more; 128
// threads, or 256 on rows longer than 1024 packs, so that a thread loads its share of a row in
// at most two steps of four packs. On an H100 (gemv_harness, bfloat16) one row of a read
// Llama-3.1-8B's down projection [4096, 14336] at 88% of the copy rate (80% on 128 threads over
// two rows), gate+up [28672, 4096] at 98% (92%), qkv [6144, 4096] at 77% (70%); 256 threads
// over two rows read the down projection for 4 and 8 rows of a at 63% and 33% (49% and 23%).
template <class T, int kRows>
void launch_block_rows(const DotRowsArgs& a, NativeStream stream) {
  constexpr int kCols = kRows == 1 ? 1 : 2;
  const auto run = [&]<int kBlock>() {
    dot_rows_block_kernel<T, kVec16<T>, kRows, kCols, kBlock, 4><<<blocks_for(a.n, kCols), kBlock, 0, stream>>>(
        static_cast<const T*>(a.a), static_cast<const T*>(a.b), static_cast<T*>(a.d), static_cast<int>(a.m), a.n,
        a.k);
  };
  if (a.k / kVec16<T> > 1024) run.template operator()<256>();
  else run.template operator()<128>();
}

// Calls f.template operator()<kRows>() with the fewest rows of a among 1, 2, 4 and kMaxDotRows
// that hold m: the kernels keep kRows sums per row of b in registers.
template <class F>
void with_rows_of_a(std::int64_t m, F&& f) {
  if (m <= 1) return f.template operator()<1>();
  if (m <= 2) return f.template operator()<2>();
  if (m <= 4) return f.template operator()<4>();
  return f.template operator()<kMaxDotRows>();
}

template <class T, int kVec>
void launch_vec(const DotRowsArgs& a, NativeStream stream) {
  with_rows_of_a(a.m, [&]<int kRows>() {
    if constexpr (sizeof(T) == 2 && kVec > 1) launch_block_rows<T, kRows>(a, stream);
    else launch_rows<T, kVec, kRows>(a, stream);
  });
}

}  // namespace

void launch_dot_rows(const DotRowsArgs& args, void* stream) {
  if (args.m == 0 || args.n == 0) return;
  if (args.m > kMaxDotRows) {
    throw ValueError("gpu kernel dot_rows serves at most " + std::to_string(kMaxDotRows) + " rows of a, not " +
                     std::to_string(args.m));
  }
  with_float_type(args.dtype, "dot_rows", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const bool wide = args.k % kVec == 0 && aligned16(args.a) && aligned16(args.b);
    if (wide) {
      launch_vec<T, kVec>(args, native_stream(stream));
    } else {
      launch_vec<T, 1>(args, native_stream(stream));
    }
  });
  check_launch("dot_rows");
}

}  // namespace tileops::gpu
