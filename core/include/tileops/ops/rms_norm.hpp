// RMSNormFwdOp: root-mean-square normalization over the trailing `normalized_shape` axes. The
// class is generated from manifests/norm.yaml; core/ops/norm/rms_norm.cpp holds its forward.
// eps: None uses the machine epsilon of the call's dtype (dtype_epsilon, tileops/dtype.hpp).
#pragma once

#include "tileops/ops/gen/norm.hpp"
