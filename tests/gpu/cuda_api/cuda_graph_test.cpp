// Graph replay as a CUDA graph: a warmed tileops::Graph of the Llama block recorded once
// (DeviceGraph) replays like the eager calls, reads the buffers it was recorded with, runs on
// the caller's stream, and survives a trip through JSON; a recorded call that would build a
// kernel, wait for the device or allocate outside the stream-ordered pool fails the capture
// with a clear error and leaves the device usable. LongRoPE, whose factors depend on the
// positions' values, picks them on the device and so records too.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "support/gpu.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/graph.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/rope.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/stream.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using testing::cuda_or_skip;

namespace {

const Device kGpu = Device::parse("cuda:0");

Tensor random_on_gpu(std::vector<std::int64_t> shape, DType dtype, unsigned seed) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu(), seed)
      .front()
      .to(kGpu);
}

struct Block {
  std::int64_t hidden, intermediate;
  RMSNormFwdOp norm;
  SwiGLUMLPFwdOp mlp;
  AddFwdOp residual;
  Tensor norm_weight, w_gate_up, w_down;

  Block(std::int64_t h, std::int64_t i, DType dtype)
      : hidden(h),
        intermediate(i),
        norm({h}, 1e-5),
        norm_weight(random_on_gpu({h}, dtype, 11)),
        w_gate_up(random_on_gpu({2 * i, h}, dtype, 12)),
        w_down(random_on_gpu({h, i}, dtype, 13)) {}

  Tensor operator()(const Tensor& x) { return residual(x, mlp(norm(x, norm_weight), w_gate_up, w_down)); }

  Graph capture(const Shape& x_shape, DType dtype) {
    const TensorSpec spec{kGpu, dtype, x_shape};
    return Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) { return std::vector<Tensor>{(*this)(in[0])}; });
  }
};

void synchronize() { REQUIRE(cudaDeviceSynchronize() == cudaSuccess); }

// What a kernel does with a failed CUDA call: throws RuntimeError naming it.
void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RuntimeError(std::string(what) + ": " + cudaGetErrorName(e));
}

// True when recording `work` fails with RuntimeError for the reason a recording refuses the
// call: CUDA's (the call returned cudaErrorStreamCaptureUnsupported) or the runtime's (the
// recording was invalidated and cannot end).
bool capture_failure(const std::function<void()>& work) {
  try {
    DeviceGraph::capture(kGpu, [&] {
      work();
      return std::vector<Tensor>{};
    });
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    cudaGetLastError();
    return what.find("cudaErrorStreamCaptureUnsupported") != std::string::npos ||
           what.find("a recorded call made a call that recording does not allow") != std::string::npos;
  }
  return false;
}

}  // namespace

TEST_CASE("GPU: a warmed Graph of the Llama block recorded as a CUDA graph replays like the eager calls") {
  if (cuda_or_skip() == nullptr) return;
  for (std::int64_t tokens : {4, 96}) {
    CAPTURE(tokens);
    const DType dtype = DType::bfloat16;
    Block block(512, 1024, dtype);
    const Tensor x = random_on_gpu({tokens, 512}, dtype, 1), x2 = random_on_gpu({tokens, 512}, dtype, 2);
    const Tensor eager = block(x), eager2 = block(x2);

    const Graph graph = block.capture({tokens, 512}, dtype);
    CHECK(testing::compare(graph.run(std::span(&x, 1))[0], eager).ok);  // eager replay: every kernel is built
    DeviceGraph recorded = DeviceGraph::capture(graph, {x.clone()});
    REQUIRE(recorded.outputs().size() == 1);
    recorded.replay();
    CHECK(testing::compare(recorded.outputs()[0], eager).ok);

    recorded.inputs()[0].copy_from(x2);  // new values in the recorded buffer
    recorded.replay();
    CHECK(testing::compare(recorded.outputs()[0], eager2).ok);
    CHECK_FALSE(testing::compare(recorded.outputs()[0], eager).ok);

    cudaStream_t stream{};
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    recorded.inputs()[0].copy_from(x);
    synchronize();  // the copy ran on the default stream, which `stream` does not wait for
    {
      StreamGuard on(kGpu, stream);
      for (int i = 0; i < 3; ++i) recorded.replay();
    }
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(testing::compare(recorded.outputs()[0], eager).ok);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
  }
}

TEST_CASE("GPU: a graph loaded from JSON records and replays on CUDA like the eager calls") {
  if (cuda_or_skip() == nullptr) return;
  const DType dtype = DType::float16;
  Block block(256, 384, dtype);
  const Tensor x = random_on_gpu({8, 256}, dtype, 3);
  const Tensor eager = block(x);
  const Graph loaded = Graph::from_json(block.capture({8, 256}, dtype).to_json());
  CHECK(loaded.constants().front().device() == kGpu);
  loaded.run(std::span(&x, 1));
  DeviceGraph recorded = DeviceGraph::capture(loaded, {x});
  recorded.replay();
  CHECK(testing::compare(recorded.outputs()[0], eager).ok);
}

TEST_CASE("GPU: a recorded call that would build a kernel fails the capture, and the device stays usable") {
  if (cuda_or_skip() == nullptr) return;
  Block block(256, 384, DType::bfloat16);
  const Tensor x = random_on_gpu({4, 256}, DType::bfloat16, 4);
  block(x);
  const Tensor other = random_on_gpu({5, 256}, DType::bfloat16, 5);  // another shape: not built
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(kGpu, [&] { return std::vector<Tensor>{block(other)}; }),
                       doctest::Contains("missed the kernel cache"), RuntimeError);
  synchronize();
  CHECK(block(other).shape() == Shape{5, 256});  // eager again
  DeviceGraph recorded = DeviceGraph::capture(kGpu, [&] { return std::vector<Tensor>{block(other)}; });
  recorded.replay();
  CHECK(testing::compare(recorded.outputs()[0], block(other)).ok);
}

TEST_CASE("GPU: a recorded call that waits for the device fails the capture with a clear error") {
  if (cuda_or_skip() == nullptr) return;
  RMSNormFwdOp norm({512}, 1e-5);
  const Tensor x = random_on_gpu({4, 512}, DType::float32, 6);
  norm(x);
  CHECK_THROWS_WITH_AS(DeviceGraph::capture(kGpu,
                                            [&] {
                                              const Tensor y = norm(x);
                                              y.to_doubles();
                                              return std::vector<Tensor>{y};
                                            }),
                       doctest::Contains("waits for the device, which a call recorded into a device graph must not do"),
                       RuntimeError);
  // A kernel that waits through the CUDA runtime itself: CUDA refuses the call, and the
  // capture fails with CUDA's reason or the kernel's.
  CHECK(capture_failure([] { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }));
  cudaGetLastError();
  CHECK(norm(x).to_doubles().size() == 4 * 512);
}

TEST_CASE("GPU: an allocation outside the stream-ordered pool breaks the recording, and capture says so") {
  if (cuda_or_skip() == nullptr) return;
  RMSNormFwdOp norm({512}, 1e-5);
  const Tensor x = random_on_gpu({4, 512}, DType::float32, 7);
  norm(x);
  void* raw = nullptr;
  CHECK(capture_failure([&] {
    norm(x);
    check_cuda(cudaMalloc(&raw, 1024), "cudaMalloc");
  }));
  cudaGetLastError();
  if (raw != nullptr) cudaFree(raw);
  CHECK(norm(x).to_doubles().size() == 4 * 512);
}

TEST_CASE("GPU: LongRoPE picks its factors from device positions on the device, so it records, and replays follow new positions") {
  if (cuda_or_skip() == nullptr) return;
  const Tensor short_factor = Tensor::from_doubles(std::vector<double>{1.0, 2.0, 3.0}, {3}, DType::float32);
  const Tensor long_factor = Tensor::from_doubles(std::vector<double>{4.0, 8.0, 16.0}, {3}, DType::float32);
  LongRoPEFwdOp op(10000.0, "BSHD", 64, 8, short_factor, long_factor);
  LongRoPEFwdOp reference(10000.0, "BSHD", 64, 8, short_factor, long_factor, std::string(REFERENCE));
  const Tensor x = random_on_gpu({2, 4, 3, 6}, DType::float32, 8);
  const Tensor positions = Tensor::from_doubles(std::vector<double>{0, 1, 2, 3}, {4}, DType::int64).to(kGpu);
  op(x, positions);
  DeviceGraph recorded = DeviceGraph::capture(kGpu, [&] { return std::vector<Tensor>{op(x, positions)}; });
  const Tensor x_host = x.to(Device::cpu());
  for (const std::vector<double>& p : {std::vector<double>{0, 1, 2, 3}, std::vector<double>{20, 21, 22, 23}}) {
    CAPTURE(p[0]);
    const Tensor host_positions = Tensor::from_doubles(p, {4}, DType::int64);
    positions.copy_from(host_positions.to(kGpu));
    recorded.replay();
    const Tensor want = reference(x_host, host_positions);
    CHECK(testing::compare(recorded.outputs()[0].to(Device::cpu()), want).ok);
  }
}
