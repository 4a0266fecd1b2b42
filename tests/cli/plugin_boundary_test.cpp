// Plugin faults replayed through the tileops program as a user meets them: a
// third-party plugin dropped beside the distribution's cpu plugin, a default target from the
// config or the environment, a plugin kernel that throws; and a plugin whose static
// constructor throws.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "plugin_host/corpus.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::corpus;
using tileops::test::run_command;

namespace {

// `tileops <args>` with the corpus case `plugins` on TILEOPS_PLUGIN_PATH (after the
// distribution's directory, which holds the cpu plugin) and the corpus's manifest on
// TILEOPS_MANIFEST_PATH. Standard error joins the output unless `json` (then it is dropped).
tileops::test::CommandResult run_beside_cpu(const std::string& plugins, const std::string& args,
                                            const std::string& env = "", bool json = false) {
  return run_command("TILEOPS_PLUGIN_PATH=" + corpus(plugins).string() + " TILEOPS_MANIFEST_PATH=" +
                     TILEOPS_TEST_DATA_DIR + "/plugin_manifests " + env + " timeout 120 " + TILEOPS_CLI_PATH + " " +
                     args + (json ? " 2>/dev/null" : " 2>&1"));
}

const char* kRmsNorm = "run RMSNormFwdOp -p normalized_shape=[64] -i x=[2,64]:float32 -i weight=[64]:float32";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("seen: a plugin registering cpu_rms_norm broke the cpu plugin, now that plugin fails and the cpu plugin works") {
  const auto plugins = run_beside_cpu("collide", "plugins --json", "", true);
  REQUIRE(plugins.status == 0);
  const auto j = nlohmann::json::parse(plugins.out);
  bool cpu_loaded = false;
  for (const auto& p : j.at("plugins")) cpu_loaded = cpu_loaded || p.at("name") == "cpu";
  CHECK(cpu_loaded);
  REQUIRE(j.at("load_failures").size() == 1);
  CHECK(j["load_failures"][0].at("plugin") == "collide");
  CHECK(contains(j["load_failures"][0].at("reason"), "plugin 'collide' cannot register key 'cpu_rms_norm' for "
                                                     "RMSNormFwdOp: plugin 'cpu' registered that key first"));
  const auto run = run_beside_cpu("collide", std::string(kRmsNorm) + " --check --json", "", true);
  REQUIRE(run.status == 0);
  CHECK(nlohmann::json::parse(run.out).at("kernels")[0].at("key") == "cpu_rms_norm");
}

TEST_CASE("seen: a tying kernel type made a built-in op fail without warning, now the load warns and dispatch names both plugins") {
  const auto plugins = run_beside_cpu("ambiguous", "plugins");
  REQUIRE(plugins.status == 0);
  CHECK(contains(plugins.out, "warning: kernel type 'ambiguous_rms_norm' (plugin 'ambiguous') and 'cpu_rms_norm' "
                              "(plugin 'cpu') both implement interface 'rms_norm' of RMSNormFwdOp on cpu"));
  const auto run = run_beside_cpu("ambiguous", kRmsNorm);
  CHECK(run.status == 1);
  CHECK(contains(run.out, "dispatch is ambiguous"));
  CHECK(contains(run.out, "cpu_rms_norm (plugin 'cpu'), ambiguous_rms_norm (plugin 'ambiguous')"));
  CHECK(contains(run_beside_cpu("ambiguous", kRmsNorm, "TILEOPS_DISABLE_PLUGINS=ambiguous").out, "serving target"));
}

TEST_CASE("seen: misspelt op names were accepted silently, now the plugin fails at load with a suggestion") {
  const auto plugins = run_beside_cpu("misspelt", "plugins --json", "", true);
  REQUIRE(plugins.status == 0);
  const auto j = nlohmann::json::parse(plugins.out);
  REQUIRE(j.at("load_failures").size() == 1);
  CHECK(contains(j["load_failures"][0].at("reason"), "'RMSNormOp', which this host does not know (did you mean "
                                                     "'RMSNormFwdOp'?)"));
  CHECK(contains(j["load_failures"][0].at("reason"), "(did you mean 'GemmFwdOp' or 'GeluFwdOp'?)"));
  const auto targets = run_beside_cpu("misspelt", "targets", "", true);
  CHECK_FALSE(contains(targets.out, "misspelt_target"));
}

TEST_CASE("seen: a kernel type for an interface the op lacks surfaced at construction, now its plugin fails at load") {
  const auto plugins = run_beside_cpu("rules", "plugins --json", "", true);
  REQUIRE(plugins.status == 0);
  const auto j = nlohmann::json::parse(plugins.out);
  bool wrong_interface = false;
  for (const auto& f : j.at("load_failures")) {
    wrong_interface = wrong_interface || (f.at("plugin") == "rule_wrong_interface" &&
                                          contains(f.at("reason"), "implements SoftmaxFwdOp::Softmax, which RMSNormFwdOp "
                                                                   "does not call"));
  }
  CHECK(wrong_interface);
  CHECK(run_beside_cpu("rules", std::string(kRmsNorm) + " --check").status == 0);
}

TEST_CASE("seen: a partial default target failed every other op without saying where it came from") {
  tileops::test::TempDir dir;
  const auto conf = dir.write("tileops.conf", "log_level = error\ndefault_target = plugtarget\n");
  const auto from_file = run_beside_cpu("good", std::string(kRmsNorm), "TILEOPS_CONFIG=" + conf.string());
  CHECK(from_file.status == 1);
  CHECK(contains(from_file.out, "RMSNormFwdOp: target 'plugtarget' (the process default target, from config file " +
                                    conf.string() + ":2) has no kernel builder for RMSNormFwdOp (it builds: "
                                    "PluginTestFwdOp; no registered target builds RMSNormFwdOp)"));
  CHECK(contains(from_file.out, "construct this op with target 'builtin'"));
  const auto from_env = run_beside_cpu("good", std::string(kRmsNorm), "TILEOPS_DEFAULT_TARGET=plugtargett");
  CHECK(from_env.status == 1);
  CHECK(contains(from_env.out, "target 'plugtargett' (the process default target, from environment variable "
                               "TILEOPS_DEFAULT_TARGET) is not registered (did you mean 'plugtarget'?); the choices "
                               "are builtin, reference, plugtarget"));
  const auto from_flag = run_beside_cpu("good", std::string(kRmsNorm) + " --default-target nope");
  CHECK(contains(from_flag.out, "(the process default target, from the --default-target option)"));
}

TEST_CASE("seen: a plugin kernel's std::invalid_argument went straight through, now it is a BackendError, exit 1") {
  const auto run = run_beside_cpu("throwingrelu", "run ReluFwdOp -i input=[4]:float32");
  CHECK(run.status == 1);
  CHECK(contains(run.out, "ReluFwdOp: the kernel of kernel type 'throwing_relu' (plugin 'throwing_relu') threw "
                          "std::invalid_argument: throwing_relu does not compute anything"));
}

TEST_CASE("a plugin whose static constructor throws ends the process at once with a message naming it, never a hang") {
  const auto run = run_beside_cpu("ctorthrows", "plugins");
  CHECK(run.status == 1);
  CHECK(contains(run.out, "tileops: fatal: plugin 'ctor_throws' (" +
                              (corpus("ctorthrows") / "libtileops_ctor_throws.so").string() +
                              ") threw std::runtime_error: static state could not be built while the dynamic loader "
                              "was opening it"));
  CHECK(contains(run.out, "TILEOPS_DISABLE_PLUGINS=ctor_throws"));
  const auto disabled = run_beside_cpu("ctorthrows", "plugins", "TILEOPS_DISABLE_PLUGINS=ctor_throws");
  CHECK(disabled.status == 0);
}

TEST_CASE("a static constructor that ends in std::terminate is named too before the process ends") {
  const auto run = run_beside_cpu("ctorterminates", "plugins");
  CHECK(run.status == 1);
  CHECK(contains(run.out, "tileops: fatal: plugin 'ctor_terminates' (" +
                              (corpus("ctorterminates") / "libtileops_ctor_terminates.so").string() +
                              ") threw std::logic_error: state built in a noexcept function while the dynamic loader "
                              "was opening it"));
}
