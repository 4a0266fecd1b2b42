// SoftmaxFwdOp: softmax along one axis. The class is generated from manifests/softmax.yaml;
// core/ops/softmax/softmax.cpp holds its forward.
#pragma once

#include <cstdint>

#include "tileops/op.hpp"
#include "tileops/ops/gen/softmax.hpp"
