// Hopper's warpgroup matrix multiply (wgmma, sm_90a machine code only) for the CUDA-only
// kernels: descriptors of 128-byte-swizzled shared-memory tiles, the m64nNk16 products with
// float accumulators that the attention and MoE kernels use, and the fences that order them.
//
// Tile layout (`swizzled_panel_offset`): a tile of kRows rows by a multiple of 64 columns of
// 16-bit elements is kept as panels of 64 columns, each kRows rows of 128 bytes; 16-byte chunk
// c of row r sits at chunk c ^ (r % 8) of its row. Read along its rows that is the K-major
// operand layout, and read along its columns the MN-major one, so one copy of a tile serves
// both products. Panels start on 1024-byte boundaries (the swizzle repeats every 8 rows).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../device/elements.hpp"
#include "async_copy.cuh"

// Defined in the device pass that has wgmma: sm_90a.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TILEOPS_HAS_WGMMA 1
#endif

namespace tileops::gpu {

#if defined(TILEOPS_HAS_WGMMA)

// The element offset of 16-byte chunk `chunk` (8 elements) of row `row` in a tile of kRows rows.
template <int kRows>
__device__ __forceinline__ int swizzled_panel_offset(int row, int chunk) {
  return (chunk >> 3) * kRows * 64 + row * 64 + (((chunk & 7) ^ (row & 7)) << 3);
}

// A shared-memory matrix descriptor with 128-byte swizzling. `start` is the unswizzled address
// of the operand's first element (its row within a panel a multiple of 8); `leading_bytes` is
// the distance between panels along the MN dimension of an MN-major operand (16 for a K-major
// one, where it is unused); `stride_bytes` the distance between groups of 8 rows (1024).
__device__ __forceinline__ std::uint64_t swizzled_descriptor(const void* start, std::uint32_t leading_bytes,
                                                             std::uint32_t stride_bytes) {
  return static_cast<std::uint64_t>((shared_address(start) & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<std::uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32) | (std::uint64_t{1} << 62);
}

// Makes this thread's completed copies (cp.async) visible to the tensor cores, which read
// shared memory through the async proxy.
__device__ __forceinline__ void fence_copies_for_wgmma() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Orders this warpgroup's register and shared-memory accesses before the wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending committed groups are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving accesses to an accumulator across a wgmma fence or wait.
template <int kChunks>
__device__ __forceinline__ void fence_registers(float (&d)[kChunks][4]) {
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[i][e])::"memory");
  }
}

// The accumulator operands of a product with 8, 16 or 32 chunks of 8 columns, d[chunk][0..3].
#define TILEOPS_WGMMA_D2(c)                                                                                 \
  "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3]), "+f"(d[c + 1][0]), "+f"(d[c + 1][1]),           \
      "+f"(d[c + 1][2]), "+f"(d[c + 1][3])
#define TILEOPS_WGMMA_D32 TILEOPS_WGMMA_D2(0), TILEOPS_WGMMA_D2(2), TILEOPS_WGMMA_D2(4), TILEOPS_WGMMA_D2(6)
#define TILEOPS_WGMMA_D64 \
  TILEOPS_WGMMA_D32, TILEOPS_WGMMA_D2(8), TILEOPS_WGMMA_D2(10), TILEOPS_WGMMA_D2(12), TILEOPS_WGMMA_D2(14)
#define TILEOPS_WGMMA_D128                                                                                    \
  TILEOPS_WGMMA_D64, TILEOPS_WGMMA_D2(16), TILEOPS_WGMMA_D2(18), TILEOPS_WGMMA_D2(20), TILEOPS_WGMMA_D2(22),       \
      TILEOPS_WGMMA_D2(24), TILEOPS_WGMMA_D2(26), TILEOPS_WGMMA_D2(28), TILEOPS_WGMMA_D2(30)
#define TILEOPS_WGMMA_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define TILEOPS_WGMMA_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

#define TILEOPS_WGMMA_R128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

// The scale-d operand as a predicate: the product adds to d when `accumulate` is non-zero.
#define TILEOPS_WGMMA_PREDICATE(operand) "{\n.reg .pred p;\nsetp.ne.b32 p, " operand ", 0;\n"

// d (64 rows by 128 columns) = a b, plus d when `accumulate`: a is 64 x 16 in shared memory,
// K-major, b is 16 x 128 in shared memory, K-major (both by descriptor); T is f16 or bf16. d is
// this thread's part of the accumulator: in each chunk of 8 columns, the warp's rows g and g + 8
// (lane = 4 g + t) at columns 2t and 2t + 1, as an m16n8 MMA holds them, warp w of the
// warpgroup holding rows 16 w on. Asynchronous: d is valid after wgmma_commit and wgmma_wait.
template <class T>
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[16][4], std::uint64_t a, std::uint64_t b,
                                                    bool accumulate) {
#define TILEOPS_WGMMA_SS(type)                                                                               \
  asm volatile(TILEOPS_WGMMA_PREDICATE("%66") "wgmma.mma_async.sync.aligned.m64n128k16.f32." type "." type " " \
               TILEOPS_WGMMA_R64 ", %64, %65, p, 1, 1, 0, 0;\n}\n"                                           \
               : TILEOPS_WGMMA_D64                                                                           \
               : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)))
  if constexpr (std::is_same_v<T, bf16>) TILEOPS_WGMMA_SS("bf16");
  else TILEOPS_WGMMA_SS("f16");
#undef TILEOPS_WGMMA_SS
}

// wgmma_m64n128k16_ss over 256 columns: b is 16 x 256 in shared memory, K-major.
template <class T>
__device__ __forceinline__ void wgmma_m64n256k16_ss(float (&d)[32][4], std::uint64_t a, std::uint64_t b,
                                                    bool accumulate) {
#define TILEOPS_WGMMA_SS(type)                                                                                  \
  asm volatile(TILEOPS_WGMMA_PREDICATE("%130") "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " " \
               TILEOPS_WGMMA_R128 ", %128, %129, p, 1, 1, 0, 0;\n}\n"                                          \
               : TILEOPS_WGMMA_D128                                                                             \
               : "l"(a), "l"(b), "r"(static_cast<int>(accumulate)))
  if constexpr (std::is_same_v<T, bf16>) TILEOPS_WGMMA_SS("bf16");
  else TILEOPS_WGMMA_SS("f16");
#undef TILEOPS_WGMMA_SS
}

// d (64 rows by kN columns, kN 64 or 128, laid out as in wgmma_m64n128k16_ss) = a b, plus d
// when `accumulate`: a is 64 x 16 in registers (four pairs of T: rows g and g + 8 at columns
// 2t, 2t + 1 and 8 + 2t, 9 + 2t, the accumulator's layout), b is 16 x kN in shared memory by
// descriptor, MN-major when kMnMajorB (a value tile read along its columns), else K-major (a
// tile of kN rows of K, such as weight rows). Asynchronous like wgmma_m64n128k16_ss; a's
// registers, too, must not change before the wait.
template <class T, int kN, bool kMnMajorB = true>
__device__ __forceinline__ void wgmma_m64k16_rs(float (&d)[kN / 8][4], const std::uint32_t (&a)[4], std::uint64_t b,
                                                bool accumulate) {
  static_assert(kN == 64 || kN == 128, "wgmma_m64k16_rs serves 64 or 128 columns");
#define TILEOPS_WGMMA_RS(n, type, regs, operands, a0, a1, a2, a3, desc, flag, major)                       \
  asm volatile(TILEOPS_WGMMA_PREDICATE(flag) "wgmma.mma_async.sync.aligned.m64n" n "k16.f32." type "." type \
                                             " " regs ", {" a0 ", " a1 ", " a2 ", " a3 "}, " desc ", p, 1, 1, " major ";\n}\n" \
               : operands                                                                                 \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(static_cast<int>(accumulate)),      \
                 "n"(kMnMajorB ? 1 : 0))
  if constexpr (kN == 128 && std::is_same_v<T, bf16>) {
    TILEOPS_WGMMA_RS("128", "bf16", TILEOPS_WGMMA_R64, TILEOPS_WGMMA_D64, "%64", "%65", "%66", "%67", "%68", "%69", "%70");
  } else if constexpr (kN == 128) {
    TILEOPS_WGMMA_RS("128", "f16", TILEOPS_WGMMA_R64, TILEOPS_WGMMA_D64, "%64", "%65", "%66", "%67", "%68", "%69", "%70");
  } else if constexpr (std::is_same_v<T, bf16>) {
    TILEOPS_WGMMA_RS("64", "bf16", TILEOPS_WGMMA_R32, TILEOPS_WGMMA_D32, "%32", "%33", "%34", "%35", "%36", "%37", "%38");
  } else {
    TILEOPS_WGMMA_RS("64", "f16", TILEOPS_WGMMA_R32, TILEOPS_WGMMA_D32, "%32", "%33", "%34", "%35", "%36", "%37", "%38");
  }
#undef TILEOPS_WGMMA_RS
}

#undef TILEOPS_WGMMA_PREDICATE
#undef TILEOPS_WGMMA_R128
#undef TILEOPS_WGMMA_R64
#undef TILEOPS_WGMMA_R32
#undef TILEOPS_WGMMA_D128
#undef TILEOPS_WGMMA_D64
#undef TILEOPS_WGMMA_D32
#undef TILEOPS_WGMMA_D2

#endif

}  // namespace tileops::gpu
