// libtileops_rocm.so: the "hip" device runtime (stream-ordered pool memory, current streams,
// copies) and HIP kernels for the op set's memory-bound interfaces, both from the sources
// shared with the cuda plugin (plugins/gpu_common). No GEMM kernel type: Debian 12 has no
// hipBLAS or rocBLAS, so GemmFwdOp on a hip device raises OpNotAvailableError.
#include "gpu_runtime.hpp"
#include "register_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rocm, TILEOPS_VERSION_STRING, registrar) {
  registrar.register_device_runtime(tileops::gpu::runtime());
  tileops::gpu::register_kernels(registrar);
}
