// Decode GEMM on tensor cores: d[i, j] = sum_p a[i, p] * b[j, p] for m <= 8 rows of a against
// weights b stored [n, k], float16 or bfloat16 with float32 accumulation. Like the shared
// dot_rows kernel it is bound by reading b once; here mma.sync (m16n8k16) does the arithmetic,
// so that the CUDA cores only issue loads: b's rows are the instruction's 16 "M" rows, a's rows
// its 8 "N" columns (zero beyond m).
//
// Operands reach the tensor cores straight from 16-byte global loads. A dot product does not
// care in which order it visits k, so a lane's 8 consecutive elements are assigned to the k
// slots that lane holds in two consecutive instructions; a and b use the same assignment.
// Each block takes 16 rows of b; its warps split k and add their accumulators at the end.
#include <cstdint>
#include <type_traits>

#include "../../gpu_common/kernels/launch.cuh"
#include "mma_dot_rows.hpp"

namespace tileops::cuda {
namespace {

using gpu::bf16;
using gpu::f16;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTileRows = 16;   // rows of b per block: the M of m16n8k16
constexpr int kChunk = 32;      // k elements per lane group: 4 lanes x 8 elements
constexpr int kUnroll = 4;      // chunks a warp loads before it multiplies

template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&acc)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                            std::uint32_t a3, std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, bf16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
#else
  __trap();  // the host launches this kernel on compute capability 8.0 and later only
#endif
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    mma_dot_rows_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ d, int m, std::int64_t n,
                        std::int64_t k) {
  __shared__ float partial[kWarps][32][4];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int group = lane / 4;  // the row of the fragments this lane holds
  const int slot = lane % 4;   // which 8 elements of a chunk it loads
  const std::int64_t chunks = (k + kChunk - 1) / kChunk;
  const T* a_row = a + static_cast<std::int64_t>(group < m ? group : m - 1) * k;
  for (std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kTileRows; j0 < n;
       j0 += static_cast<std::int64_t>(gridDim.x) * kTileRows) {
    const std::int64_t upper_row = j0 + group, lower_row = j0 + group + 8;
    const T* upper = b + (upper_row < n ? upper_row : n - 1) * k;  // rows past n read row n - 1, never stored
    const T* lower = b + (lower_row < n ? lower_row : n - 1) * k;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (std::int64_t c0 = static_cast<std::int64_t>(warp) * kUnroll; c0 < chunks; c0 += kWarps * kUnroll) {
      uint4 wu[kUnroll], wl[kUnroll], x[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t at = (c0 + u) * kChunk + slot * 8;
        const bool inside = at < k;  // k is a multiple of 8: a lane's 8 elements are all in or all out
        wu[u] = inside ? __ldcs(reinterpret_cast<const uint4*>(upper + at)) : make_uint4(0, 0, 0, 0);
        wl[u] = inside ? __ldcs(reinterpret_cast<const uint4*>(lower + at)) : make_uint4(0, 0, 0, 0);
        x[u] = inside && group < m ? __ldg(reinterpret_cast<const uint4*>(a_row + at)) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        mma_16x8x16<T>(acc, wu[u].x, wl[u].x, wu[u].y, wl[u].y, x[u].x, x[u].y);
        mma_16x8x16<T>(acc, wu[u].z, wl[u].z, wu[u].w, wl[u].w, x[u].z, x[u].w);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) partial[warp][lane][i] = acc[i];
    __syncthreads();
    if (warp == 0) {
      // acc[0], acc[1]: b row group, a rows 2 * slot and 2 * slot + 1; acc[2], acc[3]: b row group + 8.
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) sum += partial[w][lane][i];
        const int row = 2 * slot + i % 2;
        const std::int64_t col = j0 + group + (i / 2) * 8;
        if (row < m && col < n) d[row * n + col] = gpu::store_as<T>(sum);
      }
    }
    __syncthreads();  // warp 0 has read partial: the next tile may write it
  }
}

}  // namespace

void launch_mma_dot_rows(const gpu::DotRowsArgs& args, void* stream) {
  if (args.m == 0 || args.n == 0) return;
  const unsigned blocks = gpu::blocks_for(args.n, kTileRows, std::int64_t{1} << 20);
  const auto s = gpu::native_stream(stream);
  const int m = static_cast<int>(args.m);
  if (args.dtype == DType::bfloat16) {
    mma_dot_rows_kernel<bf16><<<blocks, kThreads, 0, s>>>(static_cast<const bf16*>(args.a),
                                                          static_cast<const bf16*>(args.b), static_cast<bf16*>(args.d),
                                                          m, args.n, args.k);
  } else if (args.dtype == DType::float16) {
    mma_dot_rows_kernel<f16><<<blocks, kThreads, 0, s>>>(static_cast<const f16*>(args.a),
                                                         static_cast<const f16*>(args.b), static_cast<f16*>(args.d),
                                                         m, args.n, args.k);
  } else {
    gpu::throw_unsupported(args.dtype, "mma_dot_rows");
  }
  gpu::check_launch("mma_dot_rows");
}

}  // namespace tileops::cuda
