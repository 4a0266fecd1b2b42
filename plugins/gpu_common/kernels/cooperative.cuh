// Kernels whose blocks must all be resident at once, because they wait for each other at a
// grid-wide barrier: the vendor calls that size such a grid and start it. A cooperative launch
// either places every block at once or fails; an ordinary launch of the same grid could leave
// blocks waiting for room that the spinning ones never give up.
#pragma once

#include <cstddef>
#include <type_traits>

// First: HIP's cooperative groups header uses the runtime's names without including it.
#include "../device/portability.hpp"
#include "../host/errors.hpp"

#if defined(TILEOPS_GPU_HIP)
#include <hip/hip_cooperative_groups.h>
#else
#include <cooperative_groups.h>
#endif

namespace tileops::gpu {

// Returns when every thread of the grid has called it, with the writes each made before visible
// to all. Only in a kernel started by launch_cooperative.
__device__ __forceinline__ void grid_barrier() { cooperative_groups::this_grid().sync(); }

// Starts `kernel` with every block resident at once (so that it may call grid_barrier); throws
// RuntimeError where the device cannot hold the grid.
template <class... Params>
void launch_cooperative(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t dynamic, NativeStream stream,
                        std::type_identity_t<Params>... args) {
  void* pointers[] = {static_cast<void*>(&args)...};
#if defined(TILEOPS_GPU_HIP)
  check(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers,
                                   static_cast<unsigned>(dynamic), stream),
        "a cooperative launch");
#else
  check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers, dynamic, stream),
        "a cooperative launch");
#endif
}

}  // namespace tileops::gpu
