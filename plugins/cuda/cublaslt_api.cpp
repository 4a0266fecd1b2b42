#include "cublaslt_api.hpp"

#include <dlfcn.h>

#include "tileops/errors.hpp"

namespace tileops::cuda {
namespace {

const std::string kLibrary = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);

template <class F>
void resolve(void* library, const char* name, F& entry) {
  entry = reinterpret_cast<F>(dlsym(library, name));
  if (entry == nullptr) throw RuntimeError("cuda: " + kLibrary + " has no entry point " + name);
}

CublasLtApi open_cublaslt() {
  // Never closed: handles and plans made through it live as long as the process.
  void* library = dlopen(kLibrary.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw RuntimeError("cuda: cannot load " + kLibrary + ", which GEMM on CUDA devices runs through: " +
                       (why != nullptr ? why : "unknown reason"));
  }
  CublasLtApi api{};
  resolve(library, "cublasLtCreate", api.create);
  resolve(library, "cublasLtGetStatusName", api.status_name);
  resolve(library, "cublasLtGetStatusString", api.status_string);
  resolve(library, "cublasLtMatmul", api.matmul);
  resolve(library, "cublasLtMatmulAlgoConfigGetAttribute", api.algo_config_get_attribute);
  resolve(library, "cublasLtMatmulAlgoGetHeuristic", api.algo_get_heuristic);
  resolve(library, "cublasLtMatmulDescCreate", api.desc_create);
  resolve(library, "cublasLtMatmulDescDestroy", api.desc_destroy);
  resolve(library, "cublasLtMatmulDescSetAttribute", api.desc_set_attribute);
  resolve(library, "cublasLtMatmulPreferenceCreate", api.preference_create);
  resolve(library, "cublasLtMatmulPreferenceDestroy", api.preference_destroy);
  resolve(library, "cublasLtMatmulPreferenceSetAttribute", api.preference_set_attribute);
  resolve(library, "cublasLtMatrixLayoutCreate", api.layout_create);
  resolve(library, "cublasLtMatrixLayoutDestroy", api.layout_destroy);
  return api;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = open_cublaslt();
  return api;
}

std::optional<std::string> cublaslt_load_failure() {
  try {
    cublaslt();
    return std::nullopt;
  } catch (const RuntimeError& e) {
    return e.what();
  }
}

}  // namespace tileops::cuda
