// What the launchers of the shared kernels have in common: mapping a DType to its element
// type, grid sizing, alignment tests, the launch check and raising a kernel's shared memory limit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "../device/elements.hpp"
#include "../host/errors.hpp"
#include "tileops/dtype.hpp"
#include "tileops/errors.hpp"

namespace tileops::gpu {

[[noreturn]] inline void throw_unsupported(DType dtype, const char* kernel) {
  throw TypeError(std::string("gpu kernel ") + kernel + " has no body for dtype " + std::string(dtype_name(dtype)));
}

// Calls f(T{}) with the element type of a floating dtype the kernels compute in float.
template <class F>
void with_float_type(DType dtype, const char* kernel, F&& f) {
  switch (dtype) {
    case DType::float32: f(float{}); return;
    case DType::float16: f(f16{}); return;
    case DType::bfloat16: f(bf16{}); return;
    default: throw_unsupported(dtype, kernel);
  }
}

// The same over every dtype the reductions take.
template <class F>
void with_reduce_type(DType dtype, const char* kernel, F&& f) {
  switch (dtype) {
    case DType::float32: f(float{}); return;
    case DType::float16: f(f16{}); return;
    case DType::bfloat16: f(bf16{}); return;
    case DType::float64: f(double{}); return;
    case DType::int32: f(std::int32_t{}); return;
    case DType::int64: f(std::int64_t{}); return;
    default: throw_unsupported(dtype, kernel);
  }
}

// The threads of `warps` warps of the device's `warp_size` (the launch arguments' warp_size:
// on HIP the host pass's kWarpSize is not the device's). Throws ValueError for a width the
// build's device code does not have: on CUDA anything but 32, on HIP anything but 32 or 64.
inline unsigned warp_threads(int warps, int warp_size) {
#if defined(TILEOPS_GPU_HIP)
  constexpr const char* kBuilt = "32 or 64";
  const bool built = warp_size == 32 || warp_size == 64;
#else
  constexpr const char* kBuilt = "32";
  const bool built = warp_size == 32;
#endif
  if (!built) {
    throw ValueError("gpu kernels: a launch for warps of " + std::to_string(warp_size) +
                     " threads; the device code has warps of " + kBuilt);
  }
  return static_cast<unsigned>(warps * warp_size);
}

inline bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether the tensor-core attention kernels (CUDA only) serve a call: compute capability `arch`
// 8.0 or later, float16 or bfloat16, head dim 64 or 128, every pointer 16-byte aligned.
inline bool attention_tensor_cores_serve(int arch, DType dtype, std::int64_t head_dim,
                                         std::initializer_list<const void*> pointers) {
#if defined(TILEOPS_GPU_HIP)
  return false;
#else
  return arch >= 80 && (dtype == DType::float16 || dtype == DType::bfloat16) && (head_dim == 64 || head_dim == 128) &&
         std::all_of(pointers.begin(), pointers.end(), aligned16);
#endif
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks for `work` items of `per_block` each, capped so that the grid stays within the
// hardware limit; kernels loop over what a capped grid leaves.
inline unsigned blocks_for(std::int64_t work, std::int64_t per_block, std::int64_t cap = std::int64_t{1} << 20) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(work, per_block), 1, cap));
}

// Grids of one block per row (or per two) that fill the device's resident blocks at least once
// and fewer than twice run faster as exactly the resident blocks, each looping over rows. On an
// H100 at 4096 16-bit columns (row_ops_harness), at 1.7-1.9 waves the looping grid took RMSNorm
// from 84% to 89% of a same-size copy, LayerNorm from 71-81% to 77-87% and softmax from 86-87% to
// 89-91%; at 2.6-2.9 waves the two were level within 2 points either way, and from 3.5 waves on
// one block a row was faster (at 15.5 waves by 9-11 points).
inline constexpr std::int64_t kResidentGridWaves = 2;

// Blocks for `rows` rows of a row kernel whose blocks take `rows_per_block` rows at a time and
// loop over the rest, where the device holds `resident` of its blocks at once (0: not known):
// one block per rows_per_block rows, or the resident blocks alone where that grid is between one
// and kResidentGridWaves waves.
inline unsigned row_blocks(std::int64_t rows, std::int64_t rows_per_block, std::int64_t resident) {
  const std::int64_t blocks = ceil_div(rows, rows_per_block);
  if (resident > 0 && blocks > resident && blocks < kResidentGridWaves * resident) return blocks_for(resident, 1);
  return blocks_for(rows, rows_per_block);
}

// Threads for `needed` lanes of work, rounded up to 64 (a whole number of warps on every
// vendor) and kept within [64, limit].
inline int threads_for(std::int64_t needed, int limit) {
  return static_cast<int>(std::clamp<std::int64_t>(ceil_div(needed, 64) * 64, 64, limit));
}

// Lets `kernel` take `bytes` of dynamic shared memory, past the default per-block limit where the
// device allows it; false where it does not (the device's limit is below `bytes`).
template <class Kernel>
bool allow_dynamic_shared_memory(Kernel kernel, std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max())) return false;
#if defined(TILEOPS_GPU_HIP)
  const hipError_t status = hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                                hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (status == hipErrorInvalidValue) {
    (void)hipGetLastError();  // the refusal is the answer, not a fault
    return false;
  }
  check(status, "allowing a kernel dynamic shared memory");
#else
  const cudaError_t status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (status == cudaErrorInvalidValue) {
    (void)cudaGetLastError();  // the refusal is the answer, not a fault
    return false;
  }
  check(status, "allowing a kernel dynamic shared memory");
#endif
  return true;
}

// Blocks of `threads` threads and `dynamic` bytes of dynamic shared memory that one
// multiprocessor of the current device holds at once.
template <class Kernel>
int resident_blocks_per_multiprocessor(Kernel kernel, int threads, std::size_t dynamic) {
  int blocks = 0;
#if defined(TILEOPS_GPU_HIP)
  check(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel), threads, dynamic),
        "counting a kernel's resident blocks");
#else
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic),
        "counting a kernel's resident blocks");
#endif
  return blocks;
}

// A row kernel as a launcher chose it for a row length: the kernel, its block size and the rows
// a block takes at a time (it loops over further rows a grid-stride apart).
template <class Kernel>
struct RowKernel {
  Kernel kernel;
  int threads;
  int rows_per_block;

  // Blocks of it that the current device, of `sm_count` multiprocessors, holds at once.
  std::int64_t resident_blocks(int sm_count) const {
    return static_cast<std::int64_t>(resident_blocks_per_multiprocessor(kernel, threads, 0)) * sm_count;
  }
  unsigned grid(std::int64_t rows, std::int64_t resident) const { return row_blocks(rows, rows_per_block, resident); }
};

}  // namespace tileops::gpu
