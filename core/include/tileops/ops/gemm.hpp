// GemmFwdOp: d = op(a) · op(b), op transposing when trans_a / trans_b. The class is generated
// from manifests/gemm.yaml; core/ops/gemm/gemm.cpp holds its forward.
#pragma once

#include <cstdint>

#include "tileops/op.hpp"
#include "tileops/ops/gen/gemm.hpp"
