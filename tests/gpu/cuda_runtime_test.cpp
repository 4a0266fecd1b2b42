// The cuda plugin's device runtime on a real GPU. Without a CUDA device each case says so and
// CTest reports it as skipped.
#include <doctest/doctest.h>

#include <iostream>

#include "support/gpu.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/stream.hpp"

using namespace tileops;
using testing::cuda_or_skip;

TEST_CASE("GPU: the cuda runtime reports its devices' facts and is the process accelerator") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  const DeviceFacts f = rt->facts(0);
  std::cout << "cuda:0 is " << f.name << " (sm_" << f.arch << ", " << f.sm_count << " SMs, " << f.smem_budget
            << " bytes of shared memory per block)\n";
  CHECK(f.arch >= 75);
  CHECK(f.sm_count > 0);
  CHECK(process_accelerator() == rt);
  CHECK(accelerator_current_device() == Device::parse("cuda:0"));
  CHECK_THROWS_WITH_AS(rt->facts(rt->device_count()), doctest::Contains("cuda device(s)"), ValueError);
}

TEST_CASE("GPU: tensors round-trip between host and cuda memory, strided views included") {
  if (cuda_or_skip() == nullptr) return;
  const Tensor host =
      Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3}, DType::bfloat16);
  const Tensor gpu = host.to(Device::parse("cuda:0"));
  CHECK(gpu.device() == Device::parse("cuda:0"));
  CHECK(gpu.to_doubles() == host.to_doubles());
  const Tensor transposed = gpu.transpose(0, 1).contiguous();  // a strided copy on the device
  CHECK(transposed.device() == gpu.device());
  CHECK(transposed.to_doubles() == std::vector<double>{1, 4, 2, 5, 3, 6});
  const Tensor target = Tensor::zeros({3, 2}, DType::bfloat16, gpu.device());
  target.transpose(0, 1).copy_from(gpu);  // into a strided destination
  CHECK(target.to_doubles() == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(gpu.to(DType::float32).dtype() == DType::float32);  // through the host and back
}

TEST_CASE("GPU: an op without CUDA kernels says so on cuda tensors") {
  if (cuda_or_skip() == nullptr) return;
  test::ScaleTestFwdOp op(2.0);  // the test op: host kernels only
  const Tensor x = Tensor::zeros({2, 3}, DType::float32, Device::parse("cuda:0"));
  CHECK_THROWS_WITH_AS(op(x), doctest::Contains("in-tree kernels do not run on cuda:0"), OpNotAvailableError);
}

TEST_CASE("GPU: a stream guard makes a stream current for its lifetime only, per device") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  const Device d = Device::parse("cuda:0");
  CHECK(current_stream(d) == nullptr);
  {
    // Any non-null handle serves to check the bookkeeping; nothing is launched on it here.
    void* fake = reinterpret_cast<void*>(0x10);
    StreamGuard outer(d, fake);
    CHECK(current_stream(d) == fake);
    {
      StreamGuard inner(d, nullptr);
      CHECK(current_stream(d) == nullptr);
    }
    CHECK(current_stream(d) == fake);
  }
  CHECK(current_stream(d) == nullptr);
  CHECK_THROWS_WITH_AS(StreamGuard(Device::parse("cuda:" + std::to_string(rt->device_count())), nullptr),
                       doctest::Contains("but the process sees"), ValueError);
}

TEST_CASE("GPU: a thread's next default-stream allocation of a size takes the block it freed there last") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  // The rule of the per-thread block cache: a block freed on the default stream is handed out
  // again, in stream order, to the same thread's next allocation of exactly its size there.
  constexpr std::size_t kBytes = 3 << 20;
  void* first = rt->allocate_async(kBytes, 0, nullptr);
  void* other = rt->allocate_async(kBytes + 512, 0, nullptr);
  rt->deallocate_async(first, kBytes, 0, nullptr);
  rt->deallocate_async(other, kBytes + 512, 0, nullptr);
  void* again = rt->allocate_async(kBytes, 0, nullptr);
  CHECK(again == first);
  // Tensors take the same path: an output freed and allocated again reuses its block.
  const Device d = Device::parse("cuda:0");
  const void* data = nullptr;
  {
    const Tensor t = Tensor::empty({1000, 3}, DType::float32, d);
    data = t.data_ptr();
  }
  const Tensor u = Tensor::empty({1000, 3}, DType::float32, d);
  CHECK(u.data_ptr() == data);
  rt->deallocate_async(again, kBytes, 0, nullptr);
}
