# The sources the GPU plugins share (included by plugins/cuda and plugins/rocm):
#   TILEOPS_GPU_KERNEL_SOURCES  device code, one file per kernel family, compiled as CUDA by
#                               nvcc or as HIP by hipcc (device/portability.hpp hides which)
#   TILEOPS_GPU_HOST_SOURCES    the device runtime and the kernel classes, plain C++ for the
#                               host compiler, on the vendor's runtime API (host/vendor_api.hpp)
#   TILEOPS_CUDA_KERNEL_SOURCES device code only CUDA compiles (tensor-core kernels written with
#                               PTX), which the shared launchers call on CUDA only
# A vendor build defines TILEOPS_GPU_HIP for HIP and nothing for CUDA.
set(TILEOPS_GPU_COMMON_DIR ${CMAKE_CURRENT_LIST_DIR})
set(TILEOPS_GPU_KERNEL_SOURCES
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_decode.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_prefill.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/batch_norm.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/dot_rows.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/elementwise.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/embedding.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/kv_cache_append.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/moe.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/pool.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/reduce.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/rope.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/row_norm.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/softmax.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/strided_copy.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/tiled_gemm.cu)
set(TILEOPS_GPU_HOST_SOURCES
  ${TILEOPS_GPU_COMMON_DIR}/host/attention_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/block_cache.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/elementwise_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/embedding_kernel_type.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/fault_message.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/gemm_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/gpu_runtime.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/moe_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/norm_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/pool_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/reduce_kernel_types.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/register_kernels.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/rope_kernel_type.cpp
  ${TILEOPS_GPU_COMMON_DIR}/host/strided_layout.cpp)
set(TILEOPS_CUDA_KERNEL_SOURCES
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_decode_mma.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_prefill_mma.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_prefill_wgmma.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/attention_prefill_ws.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/moe_mma.cu
  ${TILEOPS_GPU_COMMON_DIR}/kernels/moe_wgmma.cu)
