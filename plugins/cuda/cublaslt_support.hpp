// What the cuBLASLt GEMM kernel shares across its entries: one cuBLASLt handle per device and
// the float32 math mode of the process.
#pragma once

#include <cublasLt.h>

#include <string>

namespace tileops::cuda {

// The cuBLASLt handle of device `index`, created on first use with that device current and
// kept for the process. cuBLASLt takes the stream and the workspace with each matmul and
// keeps no per-call state in the handle, so threads share it without a lock.
cublasLtHandle_t cublaslt_handle(int index);

// Throws RuntimeError "cuda: cuBLASLt <what> failed: <status name> (<description>)".
void check_cublas(cublasStatus_t status, const char* what);

// Whether float32 GEMMs may multiply in TF32 (10-bit mantissa, float32 accumulation): the
// environment variable TILEOPS_CUDA_ALLOW_TF32 ("1"/"true"/"on" or "0"/"false"/"off",
// default off), read on the first call only (the first float32 entry build). Throws
// ConfigError for any other value (and
// again on later calls, which read it again).
bool tf32_allowed();

}  // namespace tileops::cuda
