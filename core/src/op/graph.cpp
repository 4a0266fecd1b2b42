#include "tileops/graph.hpp"

#include "op/graph_capture.hpp"
#include "op/instance_registry.hpp"
#include "op/thread_calls.hpp"
#include "tileops/errors.hpp"
#include "tileops/op.hpp"

namespace tileops {
namespace {
Tensor meta_twin(const Tensor& t) {
  return t.device().is_meta() ? t : Tensor::empty(t.shape(), t.dtype(), Device::meta());
}
}  // namespace

GraphCapture::GraphCapture(Graph& graph) : graph_(graph), previous_(ThreadCalls::current().graph_capture) {
  ThreadCalls::current().graph_capture = this;
}
GraphCapture::~GraphCapture() { ThreadCalls::current().graph_capture = previous_; }
GraphCapture* GraphCapture::active() { return ThreadCalls::current().graph_capture; }

int GraphCapture::add_value(const Tensor& seen, const Tensor& meta, int source) {
  const int id = static_cast<int>(graph_.value_sources_.size());
  graph_.value_sources_.push_back(source);
  ids_.emplace(seen.identity(), id);
  if (!meta.is_same(seen)) ids_.emplace(meta.identity(), id);
  seen_.push_back(seen);
  metas_.push_back(meta);
  return id;
}

int GraphCapture::add_input(const Tensor& meta) {
  return add_value(meta, meta, static_cast<int>(graph_.input_specs_.size()) - 1);
}

int GraphCapture::find(const Tensor& t) const {
  auto it = ids_.find(t.identity());
  return it == ids_.end() ? -1 : it->second;
}

int GraphCapture::value_of(const Tensor& t) {
  if (!t.defined()) return -1;
  const int id = find(t);
  if (id >= 0) return id;
  graph_.constants_.push_back(t);
  return add_value(t, meta_twin(t), -1 - static_cast<int>(graph_.constants_.size() - 1));
}

OpOutputs GraphCapture::record(const Op& op, const CallArgs& args, const std::function<MetaCall(const CallArgs&)>& meta) {
  Graph::Node node;
  node.op = op.name();
  node.instance_key = op.instance_key();
  boost::container::small_vector<Tensor, 6> meta_inputs;
  for (const Tensor& t : args.inputs) {
    const int id = value_of(t);
    node.inputs.push_back(id);
    meta_inputs.push_back(id < 0 ? Tensor() : metas_[id]);
  }
  node.out = value_of(args.out);
  const CallArgs meta_args{meta_inputs, node.out < 0 ? Tensor() : metas_[node.out]};

  MetaCall call = meta(meta_args);
  if (!call.operator_name) return call.outputs;  // not a node: its sub-ops' calls are
  node.operator_name = std::move(*call.operator_name);
  const OpOutputs& outputs = call.outputs;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    if (!out.defined()) {
      node.outputs.push_back(-1);
      continue;
    }
    const int existing = find(out);  // an aliased input or `out` keeps its value id
    node.outputs.push_back(existing >= 0 ? existing : add_value(out, out, Graph::kNodeOutput));
  }
  graph_.nodes_.push_back(std::move(node));
  return std::move(call.outputs);
}

Graph Graph::capture(std::span<const TensorSpec> inputs, const Function& fn) {
  Graph graph;
  GraphCapture capture(graph);
  std::vector<Tensor> placeholders;
  for (const TensorSpec& spec : inputs) {
    graph.input_specs_.push_back(spec);
    placeholders.push_back(Tensor::empty(spec.shape, spec.dtype, Device::meta()));
    capture.add_input(placeholders.back());
  }
  for (const Tensor& out : fn(placeholders)) {
    const int id = capture.find(out);
    if (id < 0) {
      throw RuntimeError("Graph::capture: the captured function returned " + out.str() +
                         ", which is neither an input, a constant nor the output of a captured op call");
    }
    graph.outputs_.push_back(id);
  }
  return graph;
}

std::vector<Tensor> Graph::run(std::span<const Tensor> inputs) const {
  if (inputs.size() != input_specs_.size()) {
    throw ValueError("Graph::run: expected " + std::to_string(input_specs_.size()) + " inputs, got " +
                     std::to_string(inputs.size()));
  }
  std::vector<Tensor> values(value_sources_.size());
  for (std::size_t id = 0; id < value_sources_.size(); ++id) {
    const int source = value_sources_[id];
    if (source >= 0) {
      const Tensor& given = inputs[source];
      const TensorSpec& spec = input_specs_[source];
      if (!given.defined() || given.shape() != spec.shape || given.dtype() != spec.dtype) {
        throw ValueError("Graph::run: input " + std::to_string(source) + " is " + given.str() + ", but the graph was " +
                         "captured for " + std::string(dtype_name(spec.dtype)) + shape_str(spec.shape));
      }
      values[id] = given;
    } else if (source != kNodeOutput) {
      values[id] = constants_[-1 - source];
    }
  }
  for (const Node& node : nodes_) {
    Op* op = find_instance(node.instance_key);
    if (op == nullptr) {
      throw RuntimeError("Graph::run: node " + node.operator_name + " names op instance " + node.instance_key +
                         ", which no longer exists");
    }
    if (op->name() != node.op) {
      throw RuntimeError("Graph::run: node " + node.operator_name + " expects a " + node.op + " instance, but " +
                         node.instance_key + " is a " + op->name());
    }
    boost::container::small_vector<Tensor, 6> args;
    for (int id : node.inputs) args.push_back(id < 0 ? Tensor() : values[id]);
    const CallArgs call_args{args, node.out < 0 ? Tensor() : values[node.out]};
    const OpOutputs outputs = op->run_call(call_args);
    if (outputs.size() < node.outputs.size()) {
      throw RuntimeError("Graph::run: node " + node.operator_name + " lists " + std::to_string(node.outputs.size()) +
                         " outputs, but " + node.instance_key + " returned " + std::to_string(outputs.size()));
    }
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] >= 0) values[node.outputs[i]] = outputs[i];
    }
  }
  std::vector<Tensor> out;
  for (int id : outputs_) out.push_back(values[id]);
  return out;
}

}  // namespace tileops
