// DeviceGraph: the device work of a sequence of op calls recorded once and replayed with one
// launch (a CUDA graph on cuda devices), the way torch.cuda.graphs records a model step.
//
//   tileops::Graph g = tileops::Graph::capture(specs, fn);  // the op calls, on meta tensors
//   g.run(inputs);                                           // eager: builds every kernel
//   auto dg = tileops::DeviceGraph::capture(g, inputs);      // records g.run(inputs)
//   dg.inputs()[0].copy_from(next_x);                        // new values, same buffers
//   dg.replay();                                             // one launch
//   use(dg.outputs()[0]);                                    // rewritten by each replay
//
// Only cached kernels run inside a recording (build outside it, by running the same calls
// once before): a call that would select a target or build a kernel throws RuntimeError, as
// does one that waits for the device (a copy to the host, a synchronisation). A call that the
// device runtime cannot record (an allocation outside its stream-ordered pool, say) breaks
// the recording, and capture throws RuntimeError with the runtime's reason. After a failed
// capture nothing is left recording and the ops keep their caches.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/graph.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

class TILEOPS_API DeviceGraph {
 public:
  using Work = std::function<std::vector<Tensor>()>;

  // Records the device work `work` queues on `device` (on the calling thread's current stream
  // of the device, or on a stream of the runtime's own when that is the default stream) and
  // keeps the tensors it returns as the outputs. Every other tensor the work reads must
  // outlive the DeviceGraph. Throws OpNotAvailableError when the device's runtime has no
  // graphs, RuntimeError as above, and whatever `work` throws.
  static DeviceGraph capture(const Device& device, const Work& work);
  // Records graph.run(inputs): `inputs` (all on one device, as Graph::run takes them) become
  // the buffers every replay reads; the DeviceGraph keeps them and the graph's constants.
  // Throws ValueError for inputs on several devices or none.
  static DeviceGraph capture(const Graph& graph, std::vector<Tensor> inputs);

  DeviceGraph(DeviceGraph&& other) noexcept;
  DeviceGraph& operator=(DeviceGraph&& other) noexcept;
  // Waits for the device (replays may still use the outputs), then releases the graph.
  ~DeviceGraph();

  const Device& device() const { return device_; }
  // The buffers the recorded work reads (the Graph overload's inputs; empty otherwise).
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // The recorded work's results, rewritten in place by every replay. Tensors the recording
  // allocated hold data only once a replay has run: read them after replay().
  const std::vector<Tensor>& outputs() const { return outputs_; }

  // Queues one replay on the calling thread's current stream of the device; returns without
  // waiting. Replays of one graph run one after another, whatever their streams.
  void replay() const;

 private:
  DeviceGraph(Device device, void* graph) : device_(device), graph_(graph) {}
  void release() noexcept;

  Device device_;
  void* graph_ = nullptr;  // the runtime's executable graph
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  std::vector<Tensor> constants_;
};

}  // namespace tileops
