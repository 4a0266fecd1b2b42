// libtileops_cuda.so: the "cuda" device runtime (stream-ordered pool memory, current streams,
// copies) and CUDA kernels for the op set's memory-bound interfaces, both from the sources
// shared with the rocm plugin (plugins/gpu_common).
#include "gpu_runtime.hpp"
#include "register_kernels.hpp"
#include "tileops/plugin.hpp"

TILEOPS_PLUGIN(cuda, TILEOPS_VERSION_STRING, registrar) {
  registrar.register_device_runtime(tileops::gpu::runtime());
  tileops::gpu::register_kernels(registrar);
}
