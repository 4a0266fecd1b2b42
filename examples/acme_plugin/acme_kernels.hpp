// Whole-op builders of the "acme" target. Each receives one TensorSpec per signature input
// (nullopt for an optional input not passed) and the op's manifest parameters, and returns the
// kernel that serves every call with those input dtypes and shapes.
#pragma once

#include "tileops/extend/backend.hpp"

namespace acme {

tileops::TargetKernel build_rms_norm(std::span<const std::optional<tileops::TensorSpec>> inputs,
                                     const tileops::ParamMap& params);
tileops::TargetKernel build_gemm(std::span<const std::optional<tileops::TensorSpec>> inputs,
                                 const tileops::ParamMap& params);

}  // namespace acme
