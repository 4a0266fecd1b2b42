// The call spec every forward of the RoPE family hands its rope interface.
#pragma once

#include "tileops/ops/rope.hpp"

namespace tileops::rope_detail {

// The call of x (contiguous, rank 4) for `op`'s parameters; `form` and `scale` are the leaf's.
template <class Call>
Call rope_call(const Tensor& x, const RopeFamilyOp& op, decltype(Call::form) form, double scale = 1.0) {
  Call call;
  call.device = x.device();
  call.head_dim = x.shape()[3];
  call.layout = op.input_layout() == "BHSD" ? decltype(Call::layout)::bhsd : decltype(Call::layout)::bshd;
  call.form = form;
  call.theta = op.theta();
  call.scale = scale;
  call.dtype = x.dtype();
  return call;
}

// positions, contiguous, or undefined when the call gave none.
inline Tensor contiguous_positions(const Tensor& positions) {
  return positions.defined() ? positions.contiguous() : positions;
}

}  // namespace tileops::rope_detail
