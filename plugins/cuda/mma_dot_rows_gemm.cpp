#include "mma_dot_rows_gemm.hpp"

#include <cstdint>

#include "call_support.hpp"
#include "gpu_runtime.hpp"
#include "kernels/mma_dot_rows.hpp"

namespace tileops::cuda {
namespace {
bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
}  // namespace

std::optional<std::string> MmaDotRowsGemmKernel::refusal(const GemmCall& call) {
  if (call.dtype != DType::float16 && call.dtype != DType::bfloat16) {
    return "serves float16 and bfloat16, not " + std::string(dtype_name(call.dtype));
  }
  if (call.m > gpu::kMaxDotRows) {
    return "serves at most " + std::to_string(gpu::kMaxDotRows) + " rows of a, not m = " + std::to_string(call.m);
  }
  if (call.trans_a) return "serves a stored [m, k] (trans_a = false) only";
  if (!call.trans_b) return "serves b stored [n, k] (trans_b = true) only";
  if (call.k % 8 != 0) return "needs k to be a multiple of 8, not " + std::to_string(call.k);
  int arch = call.arch.value_or(0);
  if (!call.arch && call.device && call.device->index() < gpu::runtime()->device_count()) {
    arch = gpu::runtime()->facts(call.device->index()).arch;
  }
  if (arch < 80) return "needs compute capability 8.0 or later (tensor-core bfloat16), not sm_" + std::to_string(arch);
  return std::nullopt;
}

MmaDotRowsGemmKernel::MmaDotRowsGemmKernel(const GemmCall& call) : call_(call), sm_count_(gpu::sm_count_of(call)) {}

void MmaDotRowsGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  gpu::DeviceGuard on(d.device().index());
  const gpu::DotRowsArgs args{a.data_ptr(), b.data_ptr(), d.data_ptr(), call_.m,  call_.n,
                              call_.k,      call_.dtype,  sm_count_};
  if (aligned16(args.a) && aligned16(args.b)) {
    launch_mma_dot_rows(args, gpu::stream_of(d));
  } else {
    gpu::launch_dot_rows(args, gpu::stream_of(d));
  }
}

}  // namespace tileops::cuda
