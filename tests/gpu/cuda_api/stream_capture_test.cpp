// What the hot path promises on the GPU, observed through the CUDA runtime itself: a warm call
// queues its allocation, kernel and free on the caller's current stream and neither calls
// cudaMalloc nor waits for the device (stream capture in global mode refuses both), and warm
// calls take their memory from the pool without growing it.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <vector>

#include "support/gpu.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/stream.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Device kGpu = Device::parse("cuda:0");

Tensor random_on_gpu(std::vector<std::int64_t> shape, DType dtype) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu())
      .front()
      .to(kGpu);
}

struct NodeCounts {
  int kernels = 0, allocations = 0, frees = 0;
};

NodeCounts count_nodes(cudaGraph_t graph) {
  std::size_t n = 0;
  REQUIRE(cudaGraphGetNodes(graph, nullptr, &n) == cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(n);
  REQUIRE(cudaGraphGetNodes(graph, nodes.data(), &n) == cudaSuccess);
  NodeCounts c;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    REQUIRE(cudaGraphNodeGetType(node, &type) == cudaSuccess);
    c.kernels += type == cudaGraphNodeTypeKernel;
    c.allocations += type == cudaGraphNodeTypeMemAlloc;
    c.frees += type == cudaGraphNodeTypeMemFree;
  }
  return c;
}

}  // namespace

TEST_CASE("GPU: a warm call allocates, launches and frees on the current stream and never synchronises") {
  if (testing::cuda_or_skip() == nullptr) return;
  cudaStream_t stream{};
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  RMSNormFwdOp op({4096});
  const Tensor x = random_on_gpu({4, 4096}, DType::bfloat16), w = random_on_gpu({4096}, DType::bfloat16);
  {
    StreamGuard on(kGpu, stream);
    op(x, w);  // builds the entry
  }
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  {
    StreamGuard on(kGpu, stream);
    const Tensor y = op(x, w);
    CHECK(y.device() == kGpu);
  }
  cudaGraph_t graph{};
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  const NodeCounts nodes = count_nodes(graph);
  CHECK(nodes.kernels == 1);
  CHECK(nodes.allocations == 1);
  CHECK(nodes.frees == 1);
  CHECK(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("GPU: warm calls reuse pool memory instead of asking the driver for more") {
  if (testing::cuda_or_skip() == nullptr) return;
  cudaMemPool_t pool{};
  REQUIRE(cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess);
  RMSNormFwdOp op({4096});
  const Tensor x = random_on_gpu({2048, 4096}, DType::bfloat16);
  for (int i = 0; i < 3; ++i) op(x);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::uint64_t before = 0, after = 0;
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &before) == cudaSuccess);
  for (int i = 0; i < 100; ++i) op(x);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &after) == cudaSuccess);
  CHECK(after == before);
}

TEST_CASE("GPU: copies to the host wait for the current stream's work") {
  if (testing::cuda_or_skip() == nullptr) return;
  cudaStream_t stream{};
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  RMSNormFwdOp op({4096});
  const Tensor x = random_on_gpu({512, 4096}, DType::float32);
  const std::vector<double> want = op(x).to_doubles();
  {
    StreamGuard on(kGpu, stream);
    const Tensor y = op(x);  // queued on `stream`, which does not wait for the default stream
    CHECK(y.to_doubles() == want);
  }
  CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
