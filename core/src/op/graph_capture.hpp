// The capture in progress on this thread (see tileops/graph.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "tileops/call_args.hpp"
#include "tileops/graph.hpp"

namespace tileops {

class Op;

class GraphCapture {
 public:
  explicit GraphCapture(Graph& graph);
  ~GraphCapture();
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  // The capture running on this thread, or nullptr.
  static GraphCapture* active();

  // What an op makes of a call on meta tensors: its outputs, and the operator a graph node of
  // it runs, or nullopt when the call is no node (its sub-ops' calls are).
  struct MetaCall {
    OpOutputs outputs;
    std::optional<std::string> operator_name;
  };

  // Records one op(...) call made while capturing and returns its meta outputs; `meta` runs
  // the call on the meta twins of its tensors.
  OpOutputs record(const Op& op, const CallArgs& args, const std::function<MetaCall(const CallArgs&)>& meta);

  // A new value id for meta tensor `t` (a graph input).
  int add_input(const Tensor& meta);
  // The value id of `t`, or -1 when the capture has not seen it.
  int find(const Tensor& t) const;

 private:
  int value_of(const Tensor& t);  // id of t, registering a real tensor as a constant
  int add_value(const Tensor& seen, const Tensor& meta, int source);

  Graph& graph_;
  GraphCapture* previous_;
  std::unordered_map<const void*, int> ids_;  // tensor identity → value id
  std::vector<Tensor> metas_;                 // value id → meta twin (keeps identities alive)
  std::vector<Tensor> seen_;                  // every tensor given an id (keeps identities alive)
};

}  // namespace tileops
