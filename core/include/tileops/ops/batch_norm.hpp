// BatchNormFwdOp: batch normalization; training and inference are two kernel interfaces,
// chosen by the construction parameter `training`. The class is generated from
// manifests/norm.yaml; core/ops/norm/batch_norm.cpp holds its forward.
#pragma once

#include "tileops/ops/gen/norm.hpp"
