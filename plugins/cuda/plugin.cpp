// libtileops_cuda.so: the "cuda" device runtime. The op set has no CUDA kernels yet: ops on
// cuda tensors raise OpNotAvailableError ("in-tree kernels do not run on cuda:0") unless a
// target or a registered kernel type serves them.
#include <memory>

#include "cuda_runtime.hpp"
#include "tileops/plugin.hpp"

TILEOPS_PLUGIN(cuda, TILEOPS_VERSION_STRING, registrar) {
  registrar.register_device_runtime(std::make_shared<tileops::cuda::CudaRuntime>());
}
