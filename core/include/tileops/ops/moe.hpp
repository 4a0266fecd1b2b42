// Mixture of experts (manifests/moe.yaml). The classes are generated from the manifest;
// core/ops/moe holds their forwards and the reference kernels.
//
// MoERouteFwdOp: router logits [M, E] -> the top_k experts of each token and their weights
// (softmax, or sigmoid with an optional selection bias as DeepSeek-V3 routes; optionally
// renormalised over the picked experts; times routed_scaling_factor).
// MoEExpertsFwdOp: y[m] = sum_k w[m, k] * down_e(act(gate_e(x[m])) * up_e(x[m])), e = ids[m, k],
// over the experts' stacked weights; activation silu_and_mul or gelu_and_mul. An id outside
// [0, E) raises ValueError naming it on the host, and is left out and reported by the next
// synchronising call on a GPU.
// FusedMoEFwdOp: route, then experts, as held sub-ops. An injected `experts` (a
// MoEExpertsFwdOp, e.g. one pinned to another target) decides the op's `activation` before the
// base constructor checks the parameters; an injected `route` replaces the router.
// FusedMoESharedExpertFwdOp: FusedMoEFwdOp's output plus a shared SwiGLU expert's over every
// token (stages shared: SwiGLUMLPFwdOp, add: AddFwdOp).
#pragma once

#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gen/moe.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
