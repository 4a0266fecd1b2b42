// RMSNormFwdOp: root-mean-square normalization over the trailing `normalized_shape` axes. The
// class is generated from manifests/norm.yaml; core/ops/norm/rms_norm.cpp holds its forward.
// eps: None uses the machine epsilon of the call's dtype.
#pragma once

#include "tileops/ops/gen/norm.hpp"

namespace tileops {

// The machine epsilon of a floating dtype (the gap between 1 and the next value).
TILEOPS_API double dtype_epsilon(DType dtype);

}  // namespace tileops
