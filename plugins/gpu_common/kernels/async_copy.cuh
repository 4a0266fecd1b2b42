// Copies from global to shared memory that do not pass through registers (cp.async, CUDA
// sm_80 and later): the callers guard their use with __CUDA_ARCH__ >= 800.
#pragma once

#include <cstdint>

#include "../device/portability.hpp"

namespace tileops::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 || (!defined(__CUDA_ARCH__) && !defined(TILEOPS_GPU_HIP))

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes to shared memory, or zero-fills them when !valid (src is then not read).
__device__ __forceinline__ void copy16_async(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

#endif

}  // namespace tileops::gpu
