#include "tileops/device_graph.hpp"

#include <optional>
#include <utility>

#include "logging.hpp"
#include "op/device_capture.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/stream.hpp"

namespace tileops {
namespace {

// Ends the recording on `stream` unless it was handed over to end_capture: whatever left the
// capture early (an error of the work, of a check) leaves nothing recording.
class Recording {
 public:
  Recording(DeviceRuntime& rt, int index) : rt_(rt), index_(index) {
    stream_ = rt.begin_capture(index, rt.current_stream(index));
  }
  ~Recording() {
    if (stream_ != nullptr) rt_.cancel_capture(index_, stream_);
  }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  void* stream() const { return stream_; }
  void* finish() {
    void* stream = stream_;
    stream_ = nullptr;
    return rt_.end_capture(index_, stream);
  }

 private:
  DeviceRuntime& rt_;
  int index_;
  void* stream_ = nullptr;
};

}  // namespace

DeviceGraph DeviceGraph::capture(const Device& device, const Work& work) {
  DeviceRuntime& rt = device_runtime(device.type());
  Recording recording(rt, device.index());
  std::vector<Tensor> outputs;
  {
    StreamGuard on(device, recording.stream());
    DeviceCaptureScope only_cached_calls;
    outputs = work();
  }
  DeviceGraph graph(device, recording.finish());
  graph.outputs_ = std::move(outputs);
  return graph;
}

DeviceGraph DeviceGraph::capture(const Graph& graph, std::vector<Tensor> inputs) {
  std::optional<Device> device;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (device && *device != t.device()) {
      throw ValueError("DeviceGraph::capture: the graph's inputs are on " + device->str() + " and " + t.device().str() +
                       "; one recording runs on one device");
    }
    device = t.device();
  }
  if (!device) {
    throw ValueError("DeviceGraph::capture: the graph has no input tensor, so no device to record on; record it "
                     "with DeviceGraph::capture(device, work)");
  }
  DeviceGraph recorded = capture(*device, [&] { return graph.run(inputs); });
  recorded.inputs_ = std::move(inputs);
  recorded.constants_ = graph.constants();
  return recorded;
}

DeviceGraph::DeviceGraph(DeviceGraph&& other) noexcept
    : device_(other.device_),
      graph_(std::exchange(other.graph_, nullptr)),
      inputs_(std::move(other.inputs_)),
      outputs_(std::move(other.outputs_)),
      constants_(std::move(other.constants_)) {}

DeviceGraph& DeviceGraph::operator=(DeviceGraph&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    graph_ = std::exchange(other.graph_, nullptr);
    inputs_ = std::move(other.inputs_);
    outputs_ = std::move(other.outputs_);
    constants_ = std::move(other.constants_);
  }
  return *this;
}

DeviceGraph::~DeviceGraph() { release(); }

void DeviceGraph::release() noexcept {
  if (graph_ == nullptr) return;
  DeviceRuntime* rt = find_device_runtime(device_.type());
  if (rt != nullptr) {
    // The outputs' memory returns to the pool in their allocation stream's order, which need
    // not be the order of the streams the replays ran on: wait for those first.
    try {
      rt->synchronize(device_.index());
    } catch (const std::exception& e) {
      log().warn("DeviceGraph on {}: waiting for the device before releasing the graph failed: {}", device_.str(),
                 e.what());
    }
    rt->destroy_graph(graph_, device_.index());
  }
  graph_ = nullptr;
  outputs_.clear();
  inputs_.clear();
  constants_.clear();
}

void DeviceGraph::replay() const {
  if (graph_ == nullptr) throw RuntimeError("DeviceGraph::replay: this DeviceGraph was moved from or released");
  DeviceRuntime& rt = device_runtime(device_.type());
  rt.launch_graph(graph_, device_.index(), rt.current_stream(device_.index()));
}

}  // namespace tileops
