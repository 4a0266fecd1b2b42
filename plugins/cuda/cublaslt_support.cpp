#include "cublaslt_support.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "cublaslt_api.hpp"
#include "gpu_runtime.hpp"
#include "tileops/errors.hpp"

namespace tileops::cuda {
namespace {

struct HandleSlot {
  std::once_flag once;
  cublasLtHandle_t handle = nullptr;
};

bool read_tf32_variable() {
  const char* raw = std::getenv("TILEOPS_CUDA_ALLOW_TF32");
  if (raw == nullptr) return false;
  std::string v(raw);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off" || v.empty()) return false;
  throw ConfigError("TILEOPS_CUDA_ALLOW_TF32: expected 1, true, on, 0, false or off, got '" + std::string(raw) + "'");
}

}  // namespace

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw RuntimeError(std::string("cuda: cuBLASLt ") + what + " failed: " + cublaslt().status_name(status) + " (" +
                     cublaslt().status_string(status) + ")");
}

cublasLtHandle_t cublaslt_handle(int index) {
  const std::shared_ptr<gpu::GpuRuntime> rt = gpu::runtime();
  rt->check_index(index, "cuBLASLt");
  // Never destroyed: at process exit the CUDA context may already be gone.
  static const std::unique_ptr<HandleSlot[]> slots = std::make_unique<HandleSlot[]>(rt->device_count());
  HandleSlot& slot = slots[static_cast<std::size_t>(index)];
  std::call_once(slot.once, [&] {
    gpu::DeviceGuard on(index);
    check_cublas(cublaslt().create(&slot.handle), "creating a handle");
  });
  return slot.handle;
}

bool tf32_allowed() {
  static const bool allowed = read_tf32_variable();
  return allowed;
}

}  // namespace tileops::cuda
