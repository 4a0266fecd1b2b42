// The rocm plugin on the machines the project has, none of which has an AMD GPU: it loads,
// registers the hip runtime and its kernel types, claims nothing, and every use of a hip
// device says that the process sees none. Cases print "SKIPPED (GPU): <why>" (a skip for
// CTest) where the build has no rocm plugin, and the zero-device cases where the machine has
// an AMD GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "../../plugins/gpu_common/host/gfx_arch.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/stream.hpp"
#include "tileops/version.hpp"
#include "rocm/hip_targets.hpp"
#include "support/host_runtime.hpp"

using namespace tileops;

namespace {

const Device kHip = Device::parse("hip:0");

// The hip runtime when this build made the rocm plugin (then the plugin must have loaded);
// nullptr after the skip line otherwise.
DeviceRuntime* rocm_runtime_or_skip() {
  if (!TILEOPS_TEST_ROCM_PLUGIN) {
    std::cout << "SKIPPED (GPU): this build has no rocm plugin (TILEOPS_WITH_ROCM)\n";
    return nullptr;
  }
  load_backends();
  const auto type = DeviceType::find("hip");
  REQUIRE_MESSAGE(type.has_value(), "the rocm plugin was built but registered no hip device type");
  DeviceRuntime* rt = find_device_runtime(*type);
  REQUIRE(rt != nullptr);
  return rt;
}

// The same, for the cases about a machine without an AMD GPU.
DeviceRuntime* gpu_less_rocm_or_skip() {
  DeviceRuntime* rt = rocm_runtime_or_skip();
  if (rt != nullptr && rt->device_count() > 0) {
    std::cout << "SKIPPED (GPU): this machine has an AMD GPU\n";
    return nullptr;
  }
  return rt;
}

// A hip tensor over host memory that nothing may read: what an application would hand over
// from another library (DLPack) on a machine whose hip runtime then finds no device.
Tensor unbacked_hip_tensor(Shape shape, DType dtype) {
  static std::vector<std::byte> never_read(4096);
  const std::size_t nbytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
  REQUIRE(nbytes <= never_read.size());
  auto storage = std::make_shared<Storage>(never_read.data(), nbytes, kHip, Storage::Deleter{});
  return Tensor::from_storage(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

// Keys the plugin `owner` registered, per op.
std::map<std::string, std::set<std::string>> keys_owned_by(const std::string& owner,
                                                           const std::vector<std::string>& ops) {
  std::map<std::string, std::set<std::string>> keys;
  for (const std::string& op : ops) {
    for (const RegisteredKernelType& k : registered_kernel_types(op)) {
      if (k.owner == owner) keys[op].insert(k.key);
    }
  }
  return keys;
}

const std::vector<std::string> kOps{"RMSNormFwdOp",    "LayerNormFwdOp",  "SoftmaxFwdOp",         "BatchNormFwdOp",
                                    "SiluAndMulFwdOp", "AddFwdOp",        "ReluFwdOp",            "AlibiFwdOp",
                                    "SumFwdOp",        "ProdFwdOp",       "GemmFwdOp",            "SwiGLUMLPFwdOp",
                                    "MeanFwdOp",       "GeluAndMulFwdOp", "FusedAddRMSNormFwdOp", "EmbeddingFwdOp",
                                    "GroupedQueryAttentionFwdOp", "GroupedQueryAttentionDecodeFwdOp",
                                    "GroupedQueryAttentionPagedDecodeFwdOp", "KVCacheAppendFwdOp",
                                    "PagedKVCacheAppendFwdOp", "MoERouteFwdOp", "MoEExpertsFwdOp",
                                    "MaxPool2dFwdOp", "AvgPool2dFwdOp", "RopeFwdOp", "RopeInterleavedFwdOp",
                                    "LongRoPEFwdOp"};

}  // namespace

TEST_CASE("rocm plugin: loads without a failure and registers the hip runtime as an accelerator") {
  DeviceRuntime* rt = rocm_runtime_or_skip();
  if (rt == nullptr) return;
  const std::vector<PluginInfo> plugins = loaded_plugins();
  const auto rocm = std::find_if(plugins.begin(), plugins.end(), [](const PluginInfo& p) { return p.name == "rocm"; });
  REQUIRE(rocm != plugins.end());
  CHECK(rocm->version == kVersion);
  CHECK(rocm->path.filename() == "libtileops_rocm.so");
  for (const PluginLoadFailure& f : load_failures()) CHECK_MESSAGE(f.plugin != "rocm", f.reason);
  CHECK(rt->type().name() == "hip");
  CHECK(rt->is_accelerator());
  CHECK_FALSE(rt->host_accessible());
}

TEST_CASE("rocm plugin: registers a hip kernel type for every interface the GPU kernels serve, GEMM as decode rows and tiles") {
  if (rocm_runtime_or_skip() == nullptr) return;
  const auto hip = keys_owned_by("rocm", kOps);
  const std::map<std::string, std::set<std::string>> expected{
      {"RMSNormFwdOp", {"hip_rms_norm"}},
      {"LayerNormFwdOp", {"hip_layer_norm"}},
      {"SoftmaxFwdOp", {"hip_softmax"}},
      {"BatchNormFwdOp", {"hip_batch_norm_train", "hip_batch_norm_infer"}},
      {"SiluAndMulFwdOp", {"hip_silu_and_mul"}},
      {"AddFwdOp", {"hip_add"}},
      {"ReluFwdOp", {"hip_relu"}},
      {"AlibiFwdOp", {"hip_alibi"}},
      {"SumFwdOp", {"hip_sum"}},
      {"ProdFwdOp", {"hip_prod"}},
      {"GemmFwdOp", {"hip_dot_rows_gemm", "hip_tiled_gemm"}},
      {"MeanFwdOp", {"hip_mean"}},
      {"GeluAndMulFwdOp", {"hip_gelu_and_mul"}},
      {"FusedAddRMSNormFwdOp", {"hip_fused_add_rms_norm"}},
      {"EmbeddingFwdOp", {"hip_embedding"}},
      {"GroupedQueryAttentionFwdOp", {"hip_gqa_attention"}},
      {"GroupedQueryAttentionDecodeFwdOp", {"hip_gqa_decode"}},
      {"GroupedQueryAttentionPagedDecodeFwdOp", {"hip_gqa_paged_decode"}},
      {"KVCacheAppendFwdOp", {"hip_kv_cache_append"}},
      {"PagedKVCacheAppendFwdOp", {"hip_paged_kv_cache_append"}},
      {"MoERouteFwdOp", {"hip_moe_route"}},
      {"MoEExpertsFwdOp", {"hip_moe_experts"}},
      {"MaxPool2dFwdOp", {"hip_max_pool2d"}},
      {"AvgPool2dFwdOp", {"hip_avg_pool2d"}},
      {"RopeFwdOp", {"hip_rope"}},
      {"RopeInterleavedFwdOp", {"hip_rope_interleaved"}},
      {"LongRoPEFwdOp", {"hip_long_rope"}}};
  CHECK(hip == expected);
  for (const std::string& op : kOps) {
    for (const RegisteredKernelType& k : registered_kernel_types(op)) {
      if (k.owner == "rocm") CHECK_MESSAGE(k.type->devices == std::vector<std::string>{"hip"}, k.key);
    }
  }
  // The same shared sources serve both vendors: apart from cuBLASLt's GEMM and the Hopper prefill
  // (wgmma), which are CUDA's own, the cuda plugin's keys are the hip ones under the other prefix.
  if (TILEOPS_TEST_CUDA_PLUGIN) {
    const std::set<std::string> cuda_only{"cuda_cublaslt_gemm", "cuda_gqa_attention_sm90",
                                          "cuda_gqa_attention_sm90_ws", "cuda_moe_experts_sm90"};
    for (const auto& [op, keys] : keys_owned_by("cuda", kOps)) {
      std::set<std::string> as_hip;
      for (const std::string& key : keys) {
        if (!cuda_only.contains(key)) as_hip.insert("hip_" + key.substr(std::string("cuda_").size()));
      }
      CHECK_MESSAGE(as_hip == (hip.count(op) ? hip.at(op) : std::set<std::string>{}), op);
    }
  }
}

TEST_CASE("rocm plugin: claims no device and adds no target, so the process accelerator is never hip without a GPU") {
  DeviceRuntime* rt = gpu_less_rocm_or_skip();
  if (rt == nullptr) return;
  CHECK(rt->device_count() == 0);
  CHECK(process_accelerator() != rt);
  const std::optional<Device> current = accelerator_current_device();
  CHECK_FALSE((current.has_value() && current->type() == rt->type()));
  for (const std::string& target : registered_targets()) {
    CHECK(target.find("hip") == std::string::npos);
    CHECK(target.find("rocm") == std::string::npos);
  }
}

TEST_CASE("rocm plugin: without an AMD GPU, memory, facts, streams and devices on hip:0 are refused by name") {
  DeviceRuntime* rt = gpu_less_rocm_or_skip();
  if (rt == nullptr) return;
  CHECK_THROWS_WITH_AS(Tensor::empty({4}, DType::float32, kHip), doctest::Contains("the process sees 0 hip device(s)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Tensor::zeros({2, 2}, DType::bfloat16, kHip), doctest::Contains("allocate on hip:0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(rt->facts(0), doctest::Contains("facts on hip:0, but the process sees 0 hip device(s)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(StreamGuard(kHip, nullptr), doctest::Contains("the process sees 0 hip device(s)"), ValueError);
  CHECK_THROWS_WITH_AS(rt->set_current_device(0), doctest::Contains("the process sees 0 hip device(s)"), ValueError);
  const Tensor host = Tensor::from_doubles(std::vector<double>{1, 2}, {2}, DType::float32);
  CHECK_THROWS_WITH_AS(host.to(kHip), doctest::Contains("the process sees 0 hip device(s)"), ValueError);
}

TEST_CASE("rocm plugin: without an AMD GPU, an op call on hip tensors fails clearly and leaves cpu calls alone") {
  if (gpu_less_rocm_or_skip() == nullptr) return;
  RMSNormFwdOp rms({8});
  CHECK_THROWS_WITH_AS(rms(unbacked_hip_tensor({2, 8}, DType::float32)),
                       doctest::Contains("the process sees 0 hip device(s)"), ValueError);
  GemmFwdOp gemm;
  CHECK_THROWS_WITH_AS(gemm(unbacked_hip_tensor({2, 3}, DType::float32), unbacked_hip_tensor({4, 3}, DType::float32)),
                       doctest::Contains("the process sees 0 hip device(s)"), ValueError);
  // The same instance still serves the host afterwards.
  const Tensor y = rms(Tensor::from_doubles(std::vector<double>(16, 2.0), {2, 8}, DType::float32));
  CHECK(y.device() == Device::cpu());
  for (double v : y.to_doubles()) CHECK(v == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("rocm plugin: on a GPU of an offload target hip kernels serve the call, on other AMD GPUs each declines naming every target, and GEMM takes the dot rows for decode, tiles otherwise") {
  if (rocm_runtime_or_skip() == nullptr) return;
  // The hip runtime stands aside for a test runtime reporting `arch` while dispatch is asked.
  struct HipArch {
    std::shared_ptr<DeviceRuntime> real;
    explicit HipArch(int arch) {
      for (auto& rt : device_runtimes()) {
        if (rt->type() == kHip.type()) real = rt;
      }
      unregister_device_runtime(kHip.type());
      register_device_runtime(std::make_shared<test::HostRuntime>("hip", 1, false, arch));
    }
    ~HipArch() {
      unregister_device_runtime(kHip.type());
      register_device_runtime(real);
    }
  };
  const auto on_hip = [](auto call) {
    call.device = kHip;
    return call;
  };
  const auto key_on = [&](auto& op, const char* interface, const auto& call, int arch) {
    HipArch facts(arch);
    return op.key_for(interface, on_hip(call));
  };
  const auto targets = test::hip_target_processors();
  REQUIRE_FALSE(targets.empty());
  const int built = gpu::gfx_arch_number(targets.front());
  const std::string declined = ": supports archs " + test::hip_target_names_text() + ", not gfx942";
  const std::string norm_declined = "hip_rms_norm" + declined;
  const std::string gemm_declined = "hip_dot_rows_gemm" + declined;
  RMSNormFwdOp rms({4096});
  ops::RMSNormFwdOp::RmsNorm::Call norm;
  norm.n = 4096;
  norm.dtype = DType::bfloat16;
  CHECK(key_on(rms, "rms_norm", norm, built) == "hip_rms_norm");
  CHECK_THROWS_WITH_AS(key_on(rms, "rms_norm", norm, 0x942), doctest::Contains(norm_declined.c_str()), ValueError);
  GemmFwdOp gemm;
  ops::GemmFwdOp::Gemm::Call product;
  product.m = 8;
  product.n = 4096;
  product.k = 4096;
  product.trans_b = true;
  product.dtype = DType::bfloat16;
  CHECK(key_on(gemm, "gemm", product, built) == "hip_dot_rows_gemm");
  CHECK_THROWS_WITH_AS(key_on(gemm, "gemm", product, 0x942), doctest::Contains(gemm_declined.c_str()),
                       ValueError);
  // What the dot rows refuse, the tiled GEMM serves: more rows, any transposition.
  product.m = 64;
  CHECK(key_on(gemm, "gemm", product, built) == "hip_tiled_gemm");
  product.m = 2;
  product.trans_a = true;
  product.trans_b = false;
  CHECK(key_on(gemm, "gemm", product, built) == "hip_tiled_gemm");
  product.dtype = DType::int32;
  CHECK_THROWS_WITH_AS(key_on(gemm, "gemm", product, built), doctest::Contains("hip_tiled_gemm: "), Error);
  product.dtype = DType::float16;
  product.m = std::int64_t{1} << 40;
  product.n = std::int64_t{1} << 40;
  CHECK_THROWS_WITH_AS(key_on(gemm, "gemm", product, built),
                       doctest::Contains("hip_tiled_gemm: an operand of 2^60 or more elements at m = 1099511627776, "
                                         "n = 1099511627776, k = 4096 overflows the kernel's 64-bit offsets"),
                       ValueError);
}

TEST_CASE("the hip runtime's arch number is the gfx processor name read as hexadecimal") {
  using gpu::gfx_arch_number;
  CHECK(gfx_arch_number("gfx90a") == 0x90a);
  CHECK(gfx_arch_number("gfx90a:sramecc+:xnack-") == 0x90a);
  CHECK(gfx_arch_number("gfx942:sramecc+:xnack-") == 0x942);
  CHECK(gfx_arch_number("gfx908") < gfx_arch_number("gfx90a"));
  CHECK(gfx_arch_number("gfx1100") == 0x1100);
  CHECK(gfx_arch_number("") == 0);
  CHECK(gfx_arch_number("gfx") == 0);
  CHECK(gfx_arch_number("gfx90") == 0);
  CHECK(gfx_arch_number("gfx12345") == 0);
  CHECK(gfx_arch_number("gfx90A") == 0);
  CHECK(gfx_arch_number("sm_90") == 0);
  CHECK(gfx_arch_number("gfx:90a") == 0);
}
