// What `tileops` shows of the rocm plugin, and that loading it changes nothing else: the same
// targets and the same kernels for cpu calls as a process that does not load it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocm/hip_targets.hpp"
#include "support/run_command.hpp"

using tileops::test::run_command;

namespace {

bool skip_without_rocm_plugin() {
  if (TILEOPS_TEST_ROCM_PLUGIN) return false;
  std::cout << "SKIPPED (GPU): this build has no rocm plugin (TILEOPS_WITH_ROCM)\n";
  return true;
}

// A machine's AMD GPUs are reached through the kernel driver's /dev/kfd.
bool has_amd_gpu() { return std::filesystem::exists("/dev/kfd"); }

nlohmann::json run_json(const std::string& env, const std::string& args) {
  const auto r = run_command(env + " " + TILEOPS_CLI_PATH + " " + args + " 2>/dev/null");
  REQUIRE_MESSAGE(r.status == 0, args);
  return nlohmann::json::parse(r.out);
}

nlohmann::json names(const nlohmann::json& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : list) out.push_back(e.at("name"));
  return out;
}

nlohmann::json without_type(const nlohmann::json& devices, const std::string& type) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : devices) {
    if (d.at("type") != type) out.push_back(d);
  }
  return out;
}

}  // namespace

TEST_CASE("rocm plugin: tileops info lists the cpu plugin and the GPU plugins of the build with no load failure, and hip's devices") {
  if (skip_without_rocm_plugin()) return;
  const auto j = run_json("", "info --json");
  const nlohmann::json plugins = names(j.at("plugins"));
  CHECK(std::find(plugins.begin(), plugins.end(), "cpu") != plugins.end());
  CHECK(std::find(plugins.begin(), plugins.end(), "rocm") != plugins.end());
  if (TILEOPS_TEST_CUDA_PLUGIN) CHECK(std::find(plugins.begin(), plugins.end(), "cuda") != plugins.end());
  CHECK(j.at("load_failures") == nlohmann::json::array());
  nlohmann::json hip;
  for (const auto& d : j.at("devices")) {
    if (d.at("type") == "hip") hip = d;
  }
  REQUIRE_MESSAGE(hip.is_object(), j.at("devices").dump());
  CHECK(hip.at("accelerator") == true);
  CHECK(hip.at("count") == hip.at("devices").size());
  if (!has_amd_gpu()) {
    CHECK(hip.at("count") == 0);
    const auto text = run_command(std::string(TILEOPS_CLI_PATH) + " info 2>/dev/null");
    REQUIRE(text.status == 0);
    CHECK(text.out.find("\n  hip: 0 device(s)\n") != std::string::npos);
    CHECK(text.out.find("\n  rocm ") != std::string::npos);
    CHECK(text.out.find("load failures") == std::string::npos);
  }
}

TEST_CASE("rocm plugin: tileops info names the offload targets its hip kernels were built for") {
  if (skip_without_rocm_plugin()) return;
  const auto j = run_json("", "info --json");
  nlohmann::json rocm;
  for (const auto& p : j.at("plugins")) {
    if (p.at("name") == "rocm") rocm = p;
  }
  REQUIRE_MESSAGE(rocm.is_object(), j.at("plugins").dump());
  const nlohmann::json& served = rocm.at("kernel_archs");
  REQUIRE(served.size() == 1);
  CHECK(served.at(0).at("device") == "hip");
  CHECK(served.at(0).at("every_arch") == false);
  // info lists the targets by gfx number, the build in its configured order.
  auto archs = served.at(0).at("archs").get<std::vector<std::string>>();
  auto configured = tileops::test::hip_target_processors();
  std::sort(archs.begin(), archs.end());
  std::sort(configured.begin(), configured.end());
  CHECK(archs == configured);
  const auto text = run_command(std::string(TILEOPS_CLI_PATH) + " info 2>/dev/null");
  REQUIRE(text.status == 0);
  for (const auto& gfx : tileops::test::hip_target_processors()) CHECK(text.out.find(gfx) != std::string::npos);
  CHECK(text.out.find("\n  rocm ") != std::string::npos);
  CHECK(text.out.find("(hip kernels built for gfx") != std::string::npos);
}

TEST_CASE("rocm plugin: without an AMD GPU, disabling it changes nothing but the hip runtime's entry") {
  if (skip_without_rocm_plugin()) return;
  if (has_amd_gpu()) {
    std::cout << "SKIPPED (GPU): this machine has an AMD GPU\n";
    return;
  }
  const std::string off = "TILEOPS_DISABLE_PLUGINS=rocm";
  const auto with = run_json("", "info --json");
  const auto without = run_json(off, "info --json");
  const nlohmann::json plugins = names(without.at("plugins"));
  CHECK(std::find(plugins.begin(), plugins.end(), "rocm") == plugins.end());
  CHECK(with.at("targets") == without.at("targets"));
  CHECK(without_type(with.at("devices"), "hip") == without.at("devices"));
  for (const std::string run : {"run RMSNormFwdOp -p normalized_shape=[64] -i x=[8,64]:bfloat16 -i weight=[64]:bfloat16",
                                "run AddFwdOp -i a=[4,8]:float32 -i b=[8]:float32",
                                "run GemmFwdOp --workload llama-8b-qkv-decode"}) {
    CAPTURE(run);
    const auto a = run_json("", run + " --json -r 1");
    const auto b = run_json(off, run + " --json -r 1");
    CHECK(a.at("kernels") == b.at("kernels"));
    CHECK(a.at("serving_target") == b.at("serving_target"));
  }
}
