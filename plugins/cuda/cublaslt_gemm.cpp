#include "cublaslt_gemm.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "call_support.hpp"
#include "cublaslt_support.hpp"
#include "errors.hpp"
#include "gpu_runtime.hpp"
#include "tileops/errors.hpp"

namespace tileops::cuda {
namespace {

// As much workspace as PyTorch gives cuBLASLt on Hopper: enough for the split-K algorithms.
constexpr std::uint64_t kMaxWorkspace = std::uint64_t{32} << 20;

cudaDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::float16: return CUDA_R_16F;
    case DType::bfloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T value) {
  check_cublas(cublaslt().desc_set_attribute(desc, attr, &value, sizeof(value)), "setting a matmul attribute");
}

template <class T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, T value) {
  check_cublas(cublaslt().preference_set_attribute(pref, attr, &value, sizeof(value)), "setting a heuristic preference");
}

struct DestroyPreference {
  void operator()(cublasLtMatmulPreference_t p) const { cublaslt().preference_destroy(p); }
};

template <class T>
T algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  std::size_t written = 0;
  cublaslt().algo_config_get_attribute(&algo, attr, &value, sizeof(value), &written);
  return value;
}

// 0 when every pointer is 256-byte aligned, 1 when 16-byte aligned, else 2.
std::size_t alignment_class(const void* a, const void* b, const void* d) {
  const auto bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
                    reinterpret_cast<std::uintptr_t>(d);
  return bits % 256 == 0 ? 0 : bits % 16 == 0 ? 1 : 2;
}

std::string shape_text(const CublasLtGemmKernel::Call& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " (m x n x k) " +
         std::string(dtype_name(c.dtype)) + ", trans_a " + (c.trans_a ? "true" : "false") + ", trans_b " +
         (c.trans_b ? "true" : "false");
}

}  // namespace

CublasLtGemmKernel::Layout CublasLtGemmKernel::make_layout(DType dtype, std::int64_t rows, std::int64_t cols) {
  cublasLtMatrixLayout_t l = nullptr;
  check_cublas(cublaslt().layout_create(&l, data_type(dtype), static_cast<std::uint64_t>(rows),
                                          static_cast<std::uint64_t>(cols), rows),
               "creating a matrix layout");
  return Layout(l);
}

std::optional<std::string> CublasLtGemmKernel::refusal(const Call& call) {
  if (call.dtype != DType::float16 && call.dtype != DType::bfloat16 && call.dtype != DType::float32) {
    return "serves float16, bfloat16 and float32, not " + std::string(dtype_name(call.dtype));
  }
  // Without the library the shared kernels still serve what they can.
  return cublaslt_load_failure();
}

CublasLtGemmKernel::CublasLtGemmKernel(const Call& call) : Impl(call) {
  if (call.m == 0 || call.n == 0 || call.k == 0) return;  // nothing to multiply: no plan
  const int index = gpu::device_index_of(call);
  gpu::DeviceGuard on(index);
  handle_ = cublaslt_handle(index);
  tf32_ = call.dtype == DType::float32 && tf32_allowed();
  const bool half = call.dtype != DType::float32;
  const cublasComputeType_t compute = tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasLtMatmulDesc_t desc = nullptr;
  check_cublas(cublaslt().desc_create(&desc, compute, CUDA_R_32F), "creating a matmul descriptor");
  desc_.reset(desc);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, call.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSB, call.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  // Column-major views of the row-major operands as stored: b is [k, n] (or [n, k]), a is
  // [m, k] (or [k, m]), d is [m, n].
  first_ = call.trans_b ? make_layout(call.dtype, call.k, call.n) : make_layout(call.dtype, call.n, call.k);
  second_ = call.trans_a ? make_layout(call.dtype, call.m, call.k) : make_layout(call.dtype, call.k, call.m);
  out_ = make_layout(call.dtype, call.n, call.m);

  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublaslt().preference_create(&pref), "creating a heuristic preference");
  const std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, DestroyPreference> owned(pref);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kMaxWorkspace);
  // Split-K partial sums of half-precision products are combined in float32 only.
  if (half) {
    set_pref(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, std::uint32_t{CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE});
  }
  const std::uint32_t alignments[] = {256, 16, static_cast<std::uint32_t>(dtype_size(call.dtype))};
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      set_pref(pref, attr, alignments[i]);
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublaslt().algo_get_heuristic(handle_, desc, first_.get(), second_.get(), out_.get(),
                                                            out_.get(), pref, 1, &result, &found);
    if (s == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
      plans_[i] = Plan{result.algo, result.workspaceSize};
    } else if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED) {
      check_cublas(s, "choosing an algorithm");
    }
  }
  if (!plans_[0]) {
    throw RuntimeError("cuda_cublaslt_gemm: cuBLASLt's heuristic found no algorithm for " + shape_text(call));
  }
}

void CublasLtGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  if (call_.m == 0 || call_.n == 0) return;
  const int index = d.device().index();
  gpu::DeviceGuard on(index);
  void* stream = gpu::stream_of(d);
  if (call_.k == 0) {
    gpu::check(cudaMemsetAsync(d.data_ptr(), 0, d.nbytes(), static_cast<cudaStream_t>(stream)), "zeroing a GEMM's output");
    return;
  }
  // A plan for weaker alignment also serves better-aligned operands.
  const Plan* plan = nullptr;
  for (std::size_t t = alignment_class(a.data_ptr(), b.data_ptr(), d.data_ptr()); t < plans_.size() && !plan; ++t) {
    if (plans_[t]) plan = &*plans_[t];
  }
  if (plan == nullptr) {
    // No algorithm takes operands this misaligned: multiply fresh (aligned) copies.
    const Tensor out = Tensor::empty(d.shape(), d.dtype(), d.device());
    run(*plans_[0], a.clone(), b.clone(), out, stream);
    d.copy_from(out);
    return;
  }
  run(*plan, a, b, d, stream);
}

void CublasLtGemmKernel::run(const Plan& plan, const Tensor& a, const Tensor& b, const Tensor& d, void* stream) const {
  Tensor workspace;
  if (plan.workspace > 0) workspace = Tensor::empty({static_cast<std::int64_t>(plan.workspace)}, DType::uint8, d.device());
  const float one = 1.0f, zero = 0.0f;
  check_cublas(cublaslt().matmul(handle_, desc_.get(), &one, b.data_ptr(), first_.get(), a.data_ptr(), second_.get(), &zero,
                              d.data_ptr(), out_.get(), d.data_ptr(), out_.get(), &plan.algo,
                              workspace.defined() ? workspace.data_ptr() : nullptr, plan.workspace,
                              static_cast<cudaStream_t>(stream)),
               "matmul");
}

std::optional<std::string> CublasLtGemmKernel::config() const {
  if (!plans_[0]) return "cublasLt: no product (an extent is 0)";
  const cublasLtMatmulAlgo_t& algo = plans_[0]->algo;
  return std::string("cublasLt compute=") + (tf32_ ? "32F_FAST_TF32" : "32F") +
         " algo=" + std::to_string(algo_attribute<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID)) +
         " tile=" + std::to_string(algo_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID)) +
         " splitk=" + std::to_string(algo_attribute<std::int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)) +
         " workspace=" + std::to_string(plans_[0]->workspace);
}

}  // namespace tileops::cuda
