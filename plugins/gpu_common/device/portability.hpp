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
// GPUs, 64 on the CDNA GPUs (gfx90a, gfx942), 32 on RDNA in wave32 mode. Host code never
// assumes it: blocks are sized in multiples of 64 so that both widths divide them.
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

// Exchange within a warp: the value of lane (lane ^ mask).
template <class T>
__device__ __forceinline__ T shuffle_xor(T value, int mask) {
#if defined(TILEOPS_GPU_HIP)
  return __shfl_xor(value, mask, kWarpSize);
#else
  return __shfl_xor_sync(0xffffffffu, value, mask, kWarpSize);
#endif
}

// Exchange within a warp: the value of lane `source`.
template <class T>
__device__ __forceinline__ T shuffle_from(T value, int source) {
#if defined(TILEOPS_GPU_HIP)
  return __shfl(value, source, kWarpSize);
#else
  return __shfl_sync(0xffffffffu, value, source, kWarpSize);
#endif
}

// Reduces `value` over the lanes of a warp with `op`; every lane gets the result.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) value = op(value, shuffle_xor(value, mask));
  return value;
}

// Reduces each of `values` over the threads of the block with `op` (identity `identity`);
// every thread gets the results. Every thread of the block must call it; `scratch` is shared
// memory for N * kMaxWarps values, free again when the call returns.
template <int N, class T, class Op>
__device__ __forceinline__ void block_reduce_each(T (&values)[N], Op op, T identity, T* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    values[i] = warp_reduce(values[i], op);
    if (lane == 0) scratch[i * kMaxWarps + warp] = values[i];
  }
  __syncthreads();
  const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
#pragma unroll
  for (int i = 0; i < N; ++i) values[i] = warp_reduce(lane < warps ? scratch[i * kMaxWarps + lane] : identity, op);
  __syncthreads();  // every warp has read the scratch: the caller may reuse it
}

// The same for one value.
template <class T, class Op>
__device__ __forceinline__ T block_reduce(T value, Op op, T identity, T* scratch) {
  T values[1] = {value};
  block_reduce_each(values, op, identity, scratch);
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
