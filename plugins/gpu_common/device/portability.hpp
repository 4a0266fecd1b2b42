// The device-side portability layer of the kernels shared by the cuda and rocm plugins: the
// same kernel source compiles with nvcc (CUDA) and with hipcc (HIP, TILEOPS_GPU_HIP defined).
// Kernels use only what this header and elements.hpp name, plus the launch syntax
// `kernel<<<grid, block, shared_bytes, stream>>>(...)`, threadIdx/blockIdx/blockDim/gridDim
// and __syncthreads(), which both compilers accept as they are.
#pragma once

#include <cstdint>

#if defined(TILEOPS_GPU_HIP)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

namespace tileops::gpu {

#if defined(TILEOPS_GPU_HIP)
using NativeStream = hipStream_t;
#else
using NativeStream = cudaStream_t;
#endif

inline NativeStream native_stream(void* stream) { return static_cast<NativeStream>(stream); }

// Threads of a warp (CUDA) or wavefront (HIP) for the target being compiled: 32 on NVIDIA
// GPUs, 64 on the CDNA GPUs (gfx906 to gfx942), 32 on RDNA (gfx1030 and later, wave32). Only
// device code may use it: HIP's host pass compiles once for every offload target, so there it
// is a placeholder, wrong for wave32 targets. Host code takes the device's width from the
// runtime (GpuRuntime::warp_size) or sizes blocks in multiples of 64, which both widths divide.
#if defined(TILEOPS_GPU_HIP)
#if defined(__AMDGCN_WAVEFRONT_SIZE)
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
inline constexpr int kWarpSize = 64;  // the host pass, which runs no device code
#endif
#else
inline constexpr int kWarpSize = 32;
#endif

// The most warps a block of the largest size (1024 threads) holds: the size of a block
// reduction's shared scratch.
inline constexpr int kMaxWarps = 1024 / 32;

// The helpers below take the width of the warp they work over as kWidth: the target's warp
// by default, or a power of two below it, which splits each warp into kWidth-lane groups that
// exchange among themselves only (lane numbers are then within the group).

// Exchange within a warp: the value of lane (lane ^ mask), mask < kWidth.
template <int kWidth = kWarpSize, class T>
__device__ __forceinline__ T shuffle_xor(T value, int mask) {
  static_assert(kWidth > 0 && kWidth <= kWarpSize && (kWidth & (kWidth - 1)) == 0, "a power of two up to the warp");
#if defined(TILEOPS_GPU_HIP)
  return __shfl_xor(value, mask, kWidth);
#else
  return __shfl_xor_sync(0xffffffffu, value, mask, kWidth);
#endif
}

// Exchange within a warp: the value of lane `source` (< kWidth).
template <int kWidth = kWarpSize, class T>
__device__ __forceinline__ T shuffle_from(T value, int source) {
  static_assert(kWidth > 0 && kWidth <= kWarpSize && (kWidth & (kWidth - 1)) == 0, "a power of two up to the warp");
#if defined(TILEOPS_GPU_HIP)
  return __shfl(value, source, kWidth);
#else
  return __shfl_sync(0xffffffffu, value, source, kWidth);
#endif
}

// Reduces `value` over the lanes of a warp with `op`; every lane gets the result.
template <int kWidth = kWarpSize, class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
  for (int mask = kWidth / 2; mask > 0; mask /= 2) value = op(value, shuffle_xor<kWidth>(value, mask));
  return value;
}

// Reduces each of `values` over the threads of the block with `op` (identity `identity`);
// every thread gets the results. Every thread of the block must call it; `scratch` is shared
// memory for N * kMaxWarps values, free again when the call returns. The block holds at most
// kMaxWarps warps of kWidth lanes and at most kWidth of them (any block of the target's warp).
template <int N, int kWidth = kWarpSize, class T, class Op>
__device__ __forceinline__ void block_reduce_each(T (&values)[N], Op op, T identity, T* scratch) {
  const int lane = threadIdx.x % kWidth;
  const int warp = threadIdx.x / kWidth;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    values[i] = warp_reduce<kWidth>(values[i], op);
    if (lane == 0) scratch[i * kMaxWarps + warp] = values[i];
  }
  __syncthreads();
  const int warps = (blockDim.x + kWidth - 1) / kWidth;
#pragma unroll
  for (int i = 0; i < N; ++i) values[i] = warp_reduce<kWidth>(lane < warps ? scratch[i * kMaxWarps + lane] : identity, op);
  __syncthreads();  // every warp has read the scratch: the caller may reuse it
}

// The same for one value.
template <int kWidth = kWarpSize, class T, class Op>
__device__ __forceinline__ T block_reduce(T value, Op op, T identity, T* scratch) {
  T values[1] = {value};
  block_reduce_each<1, kWidth>(values, op, identity, scratch);
  return values[0];
}

struct Add {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// min and max of 64-bit indices, the same on both compilers.
__device__ __forceinline__ std::int64_t min_index(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ std::int64_t max_index(std::int64_t a, std::int64_t b) { return a < b ? b : a; }

// The index of this thread in a one-dimensional grid, and the grid's thread count, in 64 bits.
__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

}  // namespace tileops::gpu
