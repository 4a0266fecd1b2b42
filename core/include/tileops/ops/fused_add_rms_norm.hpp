// FusedAddRMSNormFwdOp: the residual add and RMSNorm of a decoder layer in one pass. residual
// becomes x + residual in place (rounded to its dtype), and y is the RMS normalization of that
// stored residual over the trailing `normalized_shape` axes, times weight. The op returns y and
// the residual itself (residual_out aliases it). eps: None uses the machine epsilon of the
// call's dtype, as RMSNormFwdOp does. The class is generated from manifests/norm.yaml;
// core/ops/norm/fused_add_rms_norm.cpp holds its forward.
#pragma once

#include "tileops/ops/gen/norm.hpp"
