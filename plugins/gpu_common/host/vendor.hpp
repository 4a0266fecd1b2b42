// Which vendor this build of the shared GPU sources is for: the device type its runtime and
// kernels serve ("cuda", or "hip" with TILEOPS_GPU_HIP) and the prefix of its kernel keys.
#pragma once

namespace tileops::gpu {

#if defined(TILEOPS_GPU_HIP)
inline constexpr const char* kDeviceType = "hip";
#else
inline constexpr const char* kDeviceType = "cuda";
#endif

}  // namespace tileops::gpu
