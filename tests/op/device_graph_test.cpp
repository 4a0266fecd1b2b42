// DeviceGraph's rules that the core enforces, whatever the device: inside a recording only
// cached calls run (a call that would select a target or build a kernel fails the capture,
// naming the op), a failed capture leaves nothing recording, and a device whose runtime has
// no graphs refuses to record. The runtime here records nothing: it counts what the core asks.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "support/test_ops.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// Host memory, one device, a stream per thread as the core sets it, and recordings counted.
class RecordingRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return DeviceType::intern("rec_t"); }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override { return {}; }
  void* allocate(std::size_t nbytes, int) override { return nbytes ? std::malloc(nbytes) : nullptr; }
  void deallocate(void* p, std::size_t, int) noexcept override { std::free(p); }
  void copy_to_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_from_host(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  void copy_on_device(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  bool host_accessible() const override { return true; }
  void* current_stream(int) const override { return current; }
  void set_current_stream(int, void* stream) override { current = stream; }

  void* begin_capture(int, void* stream) override {
    ++begun;
    recording = true;
    return stream != nullptr ? stream : &own_stream;
  }
  void* end_capture(int, void* stream) override {
    CHECK(stream == &own_stream);
    ++ended;
    recording = false;
    return &graph;
  }
  void cancel_capture(int, void*) noexcept override {
    ++cancelled;
    recording = false;
  }
  void launch_graph(void* g, int, void* stream) override {
    CHECK(g == &graph);
    CHECK(stream == current);
    ++launches;
  }
  void destroy_graph(void* g, int) noexcept override {
    if (g == &graph) ++destroyed;
  }

  inline static thread_local void* current = nullptr;
  int own_stream = 0, graph = 0;
  int begun = 0, ended = 0, cancelled = 0, launches = 0, destroyed = 0;
  bool recording = false;
};

// ScaleTestFwdOp's kernel on rec_t devices; counts its runs while the runtime records.
class RecScale final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"rec_t"};
  explicit RecScale(const ScaleCall& call) : scale_(call.scale) {}
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

const Device kRec = Device::parse("rec_t:0");

Tensor on_rec(std::int64_t n) { return ramp(n).to(kRec); }

}  // namespace

TEST_CASE("DeviceGraph: a device whose runtime cannot record refuses to capture") {
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(Device::cpu(), [] { return std::vector<Tensor>{}; }),
                       doctest::Contains("device graphs are not available on cpu:0"), OpNotAvailableError);
}

TEST_CASE("DeviceGraph: cached calls are recorded and replayed with one launch on the current stream") {
  auto rt = std::make_shared<RecordingRuntime>();
  Registrar reg("test");
  reg.register_device_runtime(rt);
  reg.register_kernel_type<RecScale>("ScaleTestFwdOp", "rec_scale");
  ScaleTestFwdOp op(2.0);
  const Tensor x = on_rec(4);
  op(x);  // selects the target and builds the kernel
  {
    DeviceGraph g = DeviceGraph::capture(kRec, [&] {
      CHECK(rt->recording);
      CHECK(rt->current_stream(0) == &rt->own_stream);  // the recorded stream is current
      return std::vector<Tensor>{op(x)};
    });
    CHECK(rt->current_stream(0) == nullptr);  // and no longer once recorded
    CHECK(rt->ended == 1);
    REQUIRE(g.outputs().size() == 1);
    CHECK(g.outputs()[0].to_doubles() == std::vector<double>{2, 4, 6, 8});
    int user_stream = 0;
    RecordingRuntime::current = &user_stream;
    g.replay();
    RecordingRuntime::current = nullptr;
    CHECK(rt->launches == 1);
    CHECK(rt->destroyed == 0);
  }
  CHECK(rt->destroyed == 1);
  CHECK(rt->cancelled == 0);
}

TEST_CASE("DeviceGraph: a call that would build a kernel fails the capture, which ends, and the op goes on") {
  auto rt = std::make_shared<RecordingRuntime>();
  Registrar reg("test");
  reg.register_device_runtime(rt);
  reg.register_kernel_type<RecScale>("ScaleTestFwdOp", "rec_scale");
  ScaleTestFwdOp op(2.0);
  op(on_rec(4));
  const Tensor longer = on_rec(5);  // another call spec: not in the cache
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(kRec, [&] { return std::vector<Tensor>{op(longer)}; }),
                       doctest::Contains("missed the kernel cache"), RuntimeError);
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(kRec, [&] { return std::vector<Tensor>{op(longer)}; }),
                       doctest::Contains("inside a device graph capture, where only cached kernels may run"),
                       RuntimeError);
  CHECK(rt->cancelled == 2);
  CHECK_FALSE(rt->recording);
  CHECK(rt->current_stream(0) == nullptr);
  CHECK(op(longer).to_doubles() == std::vector<double>{2, 4, 6, 8, 10});  // eager, outside a capture: builds
  CHECK(op.serving_target() == std::string(BUILTIN));
}

TEST_CASE("DeviceGraph: a call that would select its op's target fails the capture, naming the op") {
  auto rt = std::make_shared<RecordingRuntime>();
  Registrar reg("test");
  reg.register_device_runtime(rt);
  reg.register_kernel_type<RecScale>("ScaleTestFwdOp", "rec_scale");
  ScaleTestFwdOp fresh(3.0);
  const Tensor x = on_rec(2);
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(kRec, [&] { return std::vector<Tensor>{fresh(x)}; }),
                       doctest::Contains((fresh.instance_key() + "): selecting the target inside a device graph capture").c_str()),
                       RuntimeError);
  CHECK_FALSE(fresh.serving_target().has_value());
  CHECK(rt->cancelled == 1);
}

TEST_CASE("DeviceGraph: a graph's inputs must be on one device") {
  auto rt = std::make_shared<RecordingRuntime>();
  Registrar reg("test");
  reg.register_device_runtime(rt);
  ScaleTestFwdOp op;
  const TensorSpec specs[] = {{kRec, DType::float32, Shape{2}}, {Device::cpu(), DType::float32, Shape{2}}};
  const Graph graph = Graph::capture(specs, [&](std::span<const Tensor> in) { return std::vector<Tensor>{op(in[0], in[1])}; });
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(graph, {on_rec(2), ramp(2)}), doctest::Contains("one recording runs on one device"),
                       ValueError);
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(graph, {}), doctest::Contains("has no input tensor"), ValueError);
  CHECK(rt->begun == 0);
}
