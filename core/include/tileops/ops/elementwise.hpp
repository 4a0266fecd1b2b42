// The elementwise ops: SiluAndMulFwdOp (y = silu(x[:, :N]) * x[:, N:]), GeluAndMulFwdOp (the
// same with gelu, erf or tanh per `approximate`), AddFwdOp (a + alpha * b,
// broadcasting, writing `out` when given; a float alpha needs a floating dtype), ReluFwdOp
// (max(input, 0), in place with inplace) and AlibiFwdOp (the ALiBi bias; with no device it goes
// to the process accelerator's current device, and cannot run in-tree kernels without one).
// The classes are generated from manifests/elementwise.yaml; core/ops/elementwise holds their
// forwards.
#pragma once

#include "tileops/ops/gen/elementwise.hpp"
