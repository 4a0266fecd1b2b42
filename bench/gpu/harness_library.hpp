// The few library symbols the shared kernels' launchers call (dtype_name in their errors, the
// launch check), defined for harnesses that compile kernel sources in so that they link without
// libtileops. Include it once, after the kernel sources.
#pragma once

#include <string>
#include <string_view>

namespace tileops {
std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    default: return "other";
  }
}
namespace gpu {
[[noreturn]] void throw_status(int status, const std::string& what) {
  throw RuntimeError(what + " failed: " + cudaGetErrorString(static_cast<cudaError_t>(status)));
}
void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw_status(e, std::string("launching kernel ") + kernel);
}
}  // namespace gpu
}  // namespace tileops
