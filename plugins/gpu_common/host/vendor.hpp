// Which vendor this build of the shared GPU sources is for: the device type its runtime and
// kernels serve ("cuda", or "hip" with TILEOPS_GPU_HIP), the prefix of its kernel keys, and
// the architectures its kernels have device code for.
#pragma once

#include "tileops/extend/kernel.hpp"

namespace tileops::gpu {

#if defined(TILEOPS_GPU_HIP)
inline constexpr const char* kDeviceType = "hip";
// The offload targets' gfx numbers (gfx_arch.hpp), from the build (TILEOPS_HIP_ARCHITECTURES):
// an AMD code object loads on its own processor only, so a kernel on any other GPU must not
// be launched.
inline constexpr ArchList kKernelArchs{TILEOPS_HIP_ARCH_NUMBERS};
#else
inline constexpr const char* kDeviceType = "cuda";
// Every architecture: the build embeds PTX of compute_75 or lower, which the driver compiles
// for any GPU without machine code of its own (cmake/TileopsCudaArchs.cmake).
inline constexpr ArchList kKernelArchs{};
#endif

}  // namespace tileops::gpu
