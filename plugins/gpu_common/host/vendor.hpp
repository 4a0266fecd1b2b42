// Which vendor this build of the shared GPU sources is for: the device type its runtime and
// kernels serve ("cuda", or "hip" with TILEOPS_GPU_HIP) and the prefix of its kernel keys.
#pragma once

#include "tileops/kernel.hpp"

namespace tileops::gpu {

#if defined(TILEOPS_GPU_HIP)
inline constexpr const char* kDeviceType = "hip";
// The vendor library's GEMM kernel types, which the shared GEMM kernels are preferred over
// where they serve (none yet for HIP).
inline constexpr KeyList kLibraryGemmKeys{};
#else
inline constexpr const char* kDeviceType = "cuda";
inline constexpr KeyList kLibraryGemmKeys{"cuda_cublaslt_gemm"};
#endif

}  // namespace tileops::gpu
