// LayerNormFwdOp: layer normalization over the trailing `normalized_shape` axes. The class is
// generated from manifests/norm.yaml; core/ops/norm/layer_norm.cpp holds its forward.
#pragma once

#include "tileops/ops/gen/norm.hpp"
