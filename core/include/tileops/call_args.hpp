// The tensors of one op call as the base class sees them.
#pragma once

#include <concepts>
#include <span>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "tileops/tensor.hpp"

namespace tileops {

// The call-time tensors of one call: one slot per `signature.inputs` entry, in order (an
// undefined Tensor for an optional input not passed), and the `out` buffer (undefined when
// the caller passed none).
struct CallArgs {
  std::span<const Tensor> inputs;
  Tensor out;

  CallArgs() = default;
  CallArgs(std::span<const Tensor> in, Tensor out_buffer = {}) : inputs(in), out(std::move(out_buffer)) {}
  // From any contiguous container of tensors (std::vector, std::array, small_vector).
  template <class C>
    requires requires(const C& c) {
      { c.data() } -> std::convertible_to<const Tensor*>;
      c.size();
    }
  CallArgs(const C& in, Tensor out_buffer = {}) : inputs(in.data(), in.size()), out(std::move(out_buffer)) {}
};

// The outputs of one call, one per `signature.outputs` entry, in order; an undefined Tensor
// stands for a null (`nullable`) output.
using OpOutputs = boost::container::small_vector<Tensor, 4>;

// The outputs `tensors`, each forwarded in: a braced list would copy each tensor once more and
// cost the reference counts a round trip per output on every call.
template <class... Tensors>
  requires(std::convertible_to<Tensors, Tensor> && ...)
OpOutputs outputs_of(Tensors&&... tensors) {
  OpOutputs outputs;
  (outputs.emplace_back(std::forward<Tensors>(tensors)), ...);
  return outputs;
}

}  // namespace tileops
