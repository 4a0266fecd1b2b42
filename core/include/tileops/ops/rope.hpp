// RopeFwdOp: rotary position embedding in the rotate-half form. For position p (positions[s],
// else s) and i < D/2, with angle = p * theta^(-2i/D):
//   y[i] = x[i] cos(angle) - x[i + D/2] sin(angle),  y[i + D/2] = x[i + D/2] cos(angle) + x[i] sin(angle).
// The class is generated from manifests/rope.yaml; core/ops/rope holds its forward.
#pragma once

#include <cstdint>

#include "tileops/ops/gen/rope.hpp"
#include "tileops/tensor.hpp"
