// SwiGLUMLPFwdOp: the gated MLP of Llama-style blocks, composed of sub-ops:
// gate_up (GemmFwdOp, x · w_gate_up^T) → act (SiluAndMulFwdOp) → down (GemmFwdOp, · w_down^T).
// The class is generated from manifests/mlp.yaml; core/ops/mlp/swiglu_mlp.cpp holds its stages
// and forward.
#pragma once

#include "tileops/ops/gemm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gen/mlp.hpp"
