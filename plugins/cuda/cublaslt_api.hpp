// cuBLASLt's entry points, resolved when the first GEMM needs them rather than when the plugin
// loads: the library is half a GiB, and mapping and relocating it cost every process that
// loads the plugin about 50 ms (0.4 s from a cold page cache), one without a GPU included.
#pragma once

#include <cublasLt.h>

#include <optional>
#include <string>

namespace tileops::cuda {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtGetStatusName) status_name;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_config_get_attribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set_attribute;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
};

// The entry points of libcublasLt.so.<major of the headers built against>, the library opened
// on the first call (thread-safe) and kept for the process. Throws RuntimeError naming the
// library and the loader's reason when it cannot be opened or lacks an entry point; a later
// call tries again.
const CublasLtApi& cublaslt();

// Why cublaslt() throws, or nullopt when it does not.
std::optional<std::string> cublaslt_load_failure();

}  // namespace tileops::cuda
