// GEMM on the GPU: decode-sized products (a few rows against weights stored [n, k]), and
// tiles of every shape and transposition.
#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {

std::optional<std::string> DotRowsGemmKernel::refusal(const Call& call) {
  if (const auto reason = refuse_unless_float(call.dtype)) return reason;
  if (call.m > kMaxDotRows) {
    return "serves at most " + std::to_string(kMaxDotRows) + " rows of a, not m = " + std::to_string(call.m);
  }
  if (call.trans_a) return "serves a stored [m, k] (trans_a = false) only";
  if (!call.trans_b) return "serves b stored [n, k] (trans_b = true) only";
  return std::nullopt;
}

DotRowsGemmKernel::DotRowsGemmKernel(const Call& call)
    : Impl(call), sm_count_(sm_count_of(call)), warp_size_(warp_size_of(call)) {}

void DotRowsGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  DeviceGuard on(d.device().index());
  launch_dot_rows({a.data_ptr(), b.data_ptr(), d.data_ptr(), call_.m, call_.n, call_.k, call_.dtype, sm_count_,
                   warp_size_},
                  stream_of(d));
}

std::optional<std::string> TiledGemmKernel::refusal(const Call& call) {
  if (const auto reason = refuse_unless_float(call.dtype)) return reason;
  return tiled_gemm_extent_refusal(call.m, call.n, call.k);
}

TiledGemmKernel::TiledGemmKernel(const Call& call) : Impl(call), sm_count_(sm_count_of(call)) {}

void TiledGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  DeviceGuard on(d.device().index());
  launch_tiled_gemm({a.data_ptr(), b.data_ptr(), d.data_ptr(), call_.m, call_.n, call_.k, call_.trans_a, call_.trans_b,
                     call_.dtype, sm_count_},
                    stream_of(d));
}

}  // namespace tileops::gpu
