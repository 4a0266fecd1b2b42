// The tensors of one op call as the base class sees them.
#pragma once

#include <span>

#include <boost/container/small_vector.hpp>

#include "tileops/tensor.hpp"

namespace tileops {

// The call-time tensors of one call: one slot per `signature.inputs` entry, in order (an
// undefined Tensor for an optional input not passed), and the `out` buffer (undefined when
// the caller passed none).
struct CallArgs {
  std::span<const Tensor> inputs;
  Tensor out;
};

// The outputs of one call, one per `signature.outputs` entry, in order; an undefined Tensor
// stands for a null (`nullable`) output.
using OpOutputs = boost::container::small_vector<Tensor, 4>;

}  // namespace tileops
