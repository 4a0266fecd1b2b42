// The cuda plugin's device runtime on a real GPU. Without a CUDA device each case says so and
// checks only what holds everywhere.
#include <doctest/doctest.h>

#include <iostream>

#include "tileops/backend.hpp"
#include "tileops/device_runtime.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/plugin.hpp"

using namespace tileops;

namespace {

// The cuda runtime with at least one device, or nullptr (after saying why on stdout).
DeviceRuntime* cuda_or_skip() {
  load_backends();
  const auto type = DeviceType::find("cuda");
  DeviceRuntime* rt = type ? find_device_runtime(*type) : nullptr;
  if (rt == nullptr) {
    std::cout << "SKIPPED (GPU): the cuda plugin is not built or not loaded\n";
    return nullptr;
  }
  if (rt->device_count() == 0) {
    std::cout << "SKIPPED (GPU): no CUDA device on this machine\n";
    return nullptr;
  }
  return rt;
}

}  // namespace

TEST_CASE("GPU: the cuda runtime reports its devices' facts and is the process accelerator") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  const DeviceFacts f = rt->facts(0);
  std::cout << "cuda:0 is " << f.name << " (sm_" << f.arch << ", " << f.sm_count << " SMs, " << f.smem_budget
            << " bytes of shared memory per block)\n";
  CHECK(f.arch >= 70);
  CHECK(f.sm_count > 0);
  CHECK(process_accelerator() == rt);
  CHECK(accelerator_current_device() == Device::parse("cuda:0"));
  CHECK_THROWS_WITH_AS(rt->facts(rt->device_count()), doctest::Contains("CUDA device(s)"), ValueError);
}

TEST_CASE("GPU: tensors round-trip between host and cuda memory, strided views included") {
  if (cuda_or_skip() == nullptr) return;
  const Tensor host = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3},
                                           DType::bfloat16);
  const Tensor gpu = host.to(Device::parse("cuda:0"));
  CHECK(gpu.device() == Device::parse("cuda:0"));
  CHECK(gpu.to_doubles() == host.to_doubles());
  const Tensor transposed = gpu.transpose(0, 1).contiguous();
  CHECK(transposed.to_doubles() == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(gpu.to(DType::float32).dtype() == DType::float32);  // through the host and back
}

TEST_CASE("GPU: an op without CUDA kernels says so on cuda tensors") {
  if (cuda_or_skip() == nullptr) return;
  RMSNormFwdOp op({3});
  const Tensor x = Tensor::zeros({2, 3}, DType::float32, Device::parse("cuda:0"));
  CHECK_THROWS_WITH_AS(op(x), doctest::Contains("in-tree kernels do not run on cuda:0"), OpNotAvailableError);
  CHECK_FALSE(op.serving_target().has_value());
}
