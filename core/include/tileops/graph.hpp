// Graph: capture a sequence of op calls once, on meta tensors, and replay it on real tensors.
//
// The C++ form of tracing an op under torch.compile. While a capture runs on a thread:
//  * a call of an op with boundary operators (a manifest entry with a call-time tensor input
//    and no composition) becomes one node, named by the boundary operator of its effect
//    branch; the call runs the op's fake (signature check and record on meta tensors) and
//    returns meta outputs;
//  * a call of an op without boundary operators (a composite) is not a node: its forward runs
//    on the meta tensors, so the calls of its sub-ops become nodes; if a target already serves
//    the composite, its target kernel becomes the node instead.
// A node names its op instance by instance key; replaying a graph whose instance no longer
// exists raises RuntimeError. A graph serialises to JSON and loads back (to_json, from_json);
// instance keys are the process's own, so a loaded graph replays while those ops live.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

class TILEOPS_API Graph {
 public:
  // One recorded call. Value ids number the graph's values in order of appearance: inputs,
  // constants (real tensors the captured code passed to an op) and node outputs; -1 is an
  // absent tensor.
  struct Node {
    std::string op;             // op class name
    std::string operator_name;  // boundary operator name, or "target:<name>" for a target kernel
    std::string instance_key;
    std::vector<int> inputs;
    int out = -1;
    std::vector<int> outputs;
  };

  using Function = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

  // Runs `fn` on meta placeholders shaped like `inputs` and records its op calls. Any real
  // tensor `fn` passes to an op is kept as a constant of the graph. Throws what the calls'
  // fakes throw (signature errors), and RuntimeError when `fn` returns a tensor that is
  // neither an input, a constant nor a node output.
  static Graph capture(std::span<const TensorSpec> inputs, const Function& fn);

  // Replays the recorded calls on `inputs` (same count, shapes and dtypes as captured; any
  // device) and returns the captured function's outputs. Throws RuntimeError when a node's
  // instance no longer exists or is not of the node's op class.
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

  // The graph as one JSON object (format "tileops-graph", version 1): input specs, constants
  // with their contents (base64 of their bytes, row-major), values, nodes and outputs.
  std::string to_json() const;
  // Loads what to_json wrote. Constants return to the devices they were on. Throws ValueError
  // naming the field for text that is not such a graph (bad JSON, another format or version,
  // a missing or mistyped field, a value id out of range or used before it is produced, a
  // shape, dtype or device that does not parse, constant data of the wrong size).
  static Graph from_json(std::string_view json);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<TensorSpec>& input_specs() const { return input_specs_; }
  // The real tensors the captured function passed to its op calls, which replays read.
  const std::vector<Tensor>& constants() const { return constants_; }

 private:
  friend class GraphCapture;
  std::vector<TensorSpec> input_specs_;
  // Per value id: the input index (>= 0), or -1 - the constant index, or kNodeOutput.
  static constexpr int kNodeOutput = -1'000'000;
  std::vector<int> value_sources_;
  std::vector<Tensor> constants_;
  std::vector<Node> nodes_;
  std::vector<int> outputs_;
};

}  // namespace tileops
