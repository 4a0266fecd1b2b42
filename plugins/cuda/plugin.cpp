// libtileops_cuda.so: the "cuda" device runtime (stream-ordered pool memory, current streams,
// copies, CUDA graphs) and CUDA kernels for the op set, from the sources shared with the rocm
// plugin (plugins/gpu_common), plus what is CUDA's own: GEMM through cuBLASLt and the tensor-core decode GEMM.
#include "cublaslt_gemm.hpp"
#include "gpu_runtime.hpp"
#include "mma_dot_rows_gemm.hpp"
#include "register_kernels.hpp"
#include "tileops/plugin.hpp"

TILEOPS_PLUGIN(cuda, TILEOPS_VERSION_STRING, registrar) {
  registrar.register_device_runtime(tileops::gpu::runtime());
  tileops::gpu::register_kernels(registrar);
  registrar.register_kernel_type<tileops::cuda::CublasLtGemmKernel>("GemmFwdOp", "cuda_cublaslt_gemm");
  registrar.register_kernel_type<tileops::cuda::MmaDotRowsGemmKernel>("GemmFwdOp", "cuda_mma_dot_rows_gemm");
}
