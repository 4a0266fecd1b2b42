#include "cuda_runtime.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "tileops/errors.hpp"

namespace tileops::cuda {
namespace {

void check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) {
    throw RuntimeError("cuda: " + what + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

// Runs `f` with device `index` current, restoring the caller's device after.
template <class F>
void on_device(int index, F&& f) {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  if (previous != index) check(cudaSetDevice(index), "cudaSetDevice(" + std::to_string(index) + ")");
  try {
    f();
  } catch (...) {
    if (previous != index) cudaSetDevice(previous);
    throw;
  }
  if (previous != index) check(cudaSetDevice(previous), "cudaSetDevice(" + std::to_string(previous) + ")");
}

}  // namespace

int CudaRuntime::device_count() const {
  std::call_once(count_once_, [this] {
    if (cudaGetDeviceCount(&count_) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: the runtime reports zero devices
      count_ = 0;
    }
  });
  return count_;
}

DeviceType CudaRuntime::type() const { return DeviceType::intern("cuda"); }

void CudaRuntime::check_index(int index, const char* what) const {
  if (index < 0 || index >= device_count()) {
    throw ValueError(std::string("cuda: ") + what + " on cuda:" + std::to_string(index) + ", but the process sees " +
                     std::to_string(device_count()) + " CUDA device(s)");
  }
}

DeviceFacts CudaRuntime::facts(int index) const {
  check_index(index, "facts");
  std::call_once(facts_once_, [this] {
    for (int i = 0; i < device_count(); ++i) {
      cudaDeviceProp p{};
      check(cudaGetDeviceProperties(&p, i), "cudaGetDeviceProperties");
      DeviceFacts f;
      f.arch = p.major * 10 + p.minor;
      f.sm_count = p.multiProcessorCount;
      f.smem_budget = p.sharedMemPerBlockOptin;
      f.name = p.name;
      facts_.push_back(f);
    }
  });
  return facts_[static_cast<std::size_t>(index)];
}

void* CudaRuntime::allocate(std::size_t nbytes, int index) {
  check_index(index, "allocate");
  if (nbytes == 0) return nullptr;
  void* p = nullptr;
  on_device(index, [&] { check(cudaMalloc(&p, nbytes), "cudaMalloc(" + std::to_string(nbytes) + " bytes)"); });
  return p;
}

void CudaRuntime::deallocate(void* ptr, std::size_t, int index) noexcept {
  if (ptr == nullptr) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(index);
  cudaFree(ptr);
  cudaSetDevice(previous);
}

void CudaRuntime::copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_to_host");
  on_device(index, [&] { check(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host"); });
}

void CudaRuntime::copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_from_host");
  on_device(index, [&] { check(cudaMemcpy(dst, src, nbytes, cudaMemcpyHostToDevice), "cudaMemcpy from host"); });
}

void CudaRuntime::copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) {
  check_index(index, "copy_on_device");
  on_device(index, [&] { check(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToDevice), "cudaMemcpy on device"); });
}

void CudaRuntime::synchronize(int index) {
  check_index(index, "synchronize");
  on_device(index, [] { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); });
}

int CudaRuntime::current_device() const {
  int index = 0;
  check(cudaGetDevice(&index), "cudaGetDevice");
  return index;
}

void CudaRuntime::set_current_device(int index) {
  check_index(index, "set_current_device");
  check(cudaSetDevice(index), "cudaSetDevice(" + std::to_string(index) + ")");
}

}  // namespace tileops::cuda
