# The device code the cuda plugin embeds, as nvcc -gencode options in TILEOPS_CUDA_GENCODE (for
# the plugin and the GPU benchmarks). By default: machine code for Ampere (sm_80, which 8.6 and
# 8.7 also run), Ada (sm_89) and Hopper (sm_90a), so that A100, L40 and H100/H200 load without
# compiling anything; PTX of compute_75, which the driver compiles for Turing, and of
# compute_90, which it compiles for GPUs newer than Hopper. The cuda kernel types claim every
# architecture (plugins/gpu_common/host/vendor.hpp), which the lowest PTX must back: every GPU
# CUDA 13 supports is 7.5 or later. A build may embed fewer (CI builds sm_90a only).
set(TILEOPS_CUDA_ARCHS "80;89;90a" CACHE STRING "GPU architectures the cuda plugin embeds machine code for")
set(TILEOPS_CUDA_PTX "75;90" CACHE STRING "Virtual architectures the cuda plugin embeds PTX of")
if(NOT TILEOPS_CUDA_PTX)
  message(FATAL_ERROR "TILEOPS_CUDA_PTX is empty: the cuda kernel types serve every architecture, "
                      "which needs PTX of compute_75 (the lowest CUDA 13 supports)")
endif()
list(GET TILEOPS_CUDA_PTX 0 _lowest_ptx)
foreach(_ptx ${TILEOPS_CUDA_PTX})
  if(NOT _ptx MATCHES "^[0-9]+$")
    message(FATAL_ERROR "TILEOPS_CUDA_PTX takes compute capabilities such as 75 or 90; got '${_ptx}'")
  endif()
  if(_ptx LESS _lowest_ptx)
    set(_lowest_ptx ${_ptx})
  endif()
endforeach()
if(_lowest_ptx GREATER 75)
  message(FATAL_ERROR "TILEOPS_CUDA_PTX must include 75 or lower (the cuda kernel types serve every "
                      "architecture CUDA 13 supports, from 7.5); its lowest is ${_lowest_ptx}")
endif()
set(TILEOPS_CUDA_GENCODE "")
foreach(_arch ${TILEOPS_CUDA_ARCHS})
  if(NOT _arch MATCHES "^[0-9]+[a-z]?$")
    message(FATAL_ERROR "TILEOPS_CUDA_ARCHS takes architectures such as 80 or 90a; got '${_arch}'")
  endif()
  list(APPEND TILEOPS_CUDA_GENCODE -gencode=arch=compute_${_arch},code=sm_${_arch})
endforeach()
foreach(_ptx ${TILEOPS_CUDA_PTX})
  list(APPEND TILEOPS_CUDA_GENCODE -gencode=arch=compute_${_ptx},code=compute_${_ptx})
endforeach()
message(STATUS "tileops: cuda plugin machine code for ${TILEOPS_CUDA_ARCHS}, PTX of ${TILEOPS_CUDA_PTX}")
