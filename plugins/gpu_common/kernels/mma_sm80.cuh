// Tensor-core building blocks of the CUDA-only attention kernels (sm_80 and later): ldmatrix
// fragment loads, the m16n8k16 MMA with float accumulators, and the XOR-swizzled tile layout
// that keeps an ldmatrix's eight rows in distinct shared-memory banks.
#pragma once

#include <cstdint>
#include <mutex>
#include <type_traits>

#include "../device/elements.hpp"
#include "async_copy.cuh"
#include "launch.cuh"

namespace tileops::gpu {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

// c += a b for a 16x16 tile a (row-major fragments) and a 16x8 tile b (column-major), T being
// f16 or bf16.
template <class T>
__device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, bf16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two values as the element type's pair, the lower index in the low half.
template <class T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  return static_cast<std::uint32_t>(store_as<T>(lo).bits) | (static_cast<std::uint32_t>(store_as<T>(hi).bits) << 16);
}

// The element offset of 16-byte chunk `chunk` of row `row` in a tile of kD columns (kD >= 64).
template <int kD>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * kD + ((chunk ^ (row & 7)) << 3);
}

#endif

// Lets kKernel use kBytes of dynamic shared memory (more than the default 48 KiB) on the
// current device: once per device, the first 64 devices remembered.
template <auto kKernel, int kBytes>
void allow_shared_memory() {
  constexpr int kDevices = 64;
  static std::once_flag configured[kDevices];
  int device = 0;
  check(cudaGetDevice(&device), "reading the current device");
  const auto raise_limit = [] {
    if (!allow_dynamic_shared_memory(kKernel, kBytes)) {
      throw RuntimeError("gpu kernels: the device allows a kernel less than " + std::to_string(kBytes) +
                         " bytes of dynamic shared memory");
    }
  };
  if (device >= 0 && device < kDevices) std::call_once(configured[device], raise_limit);
  else raise_limit();
}

}  // namespace tileops::gpu
