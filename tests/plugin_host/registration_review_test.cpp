// What a plugin registers is checked when it loads: collisions fail
// the later plugin, registrations the op catalogue refuses fail the plugin that made them, and
// ambiguity a plugin introduces is a warning naming both keys, both plugins and the fix.
#include <doctest/doctest.h>

#include <algorithm>

#include "nearest_names.hpp"
#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"
#include "plugins/plugin_test_types.hpp"
#include "support/plugin_test_fwd_op.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/manifest.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/paths.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using tileops::plugin::PluginHost;
using tileops::test::corpus;
using tileops::test::has_kernel_type;
using tileops::test::has_target;

namespace {

const PluginLoadFailure* failure_of(const PluginHost& host, const std::string& plugin) {
  for (const auto& f : host.failures()) {
    if (f.plugin == plugin) return &f;
  }
  return nullptr;
}

bool cpu_plugin_loaded() {
  const auto loaded = loaded_plugins();
  return std::any_of(loaded.begin(), loaded.end(), [](const PluginInfo& p) { return p.name == "cpu"; });
}

ops::RMSNormFwdOp::RmsNorm::Call rms_call(DType dtype) {
  ops::RMSNormFwdOp::RmsNorm::Call call;
  call.device = Device::cpu();
  call.n = 64;
  call.dtype = dtype;
  return call;
}

// A cpu RMSNorm kernel type that a test registers under many keys; never called.
class ManyRmsNorm final : public ops::RMSNormFwdOp::RmsNorm::Impl<> {
 public:
  using Impl::Impl;
  static constexpr DeviceTypes devices{"cpu"};
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

}  // namespace

TEST_CASE("the distribution's plugin directory is searched before the configured directories") {
  const auto path = plugin_search_path();
  REQUIRE_FALSE(path.empty());
  CHECK(path.front() == default_plugin_directory());
}

TEST_CASE("a plugin reusing the cpu plugin's key fails, naming both plugins, the cpu plugin keeps working") {
  load_backends();
  REQUIRE(cpu_plugin_loaded());
  PluginHost host;
  host.load({corpus("collide")});
  CHECK(host.loaded().empty());
  const PluginLoadFailure* f = failure_of(host, "collide");
  REQUIRE(f != nullptr);
  CHECK(f->reason == "failed to register: tileops::BackendError: register_kernel_type: plugin 'collide' cannot "
                     "register key 'cpu_rms_norm' for RMSNormFwdOp: plugin 'cpu' registered that key first (keys are "
                     "unique per op; choose another key, or disable one of the two)");
  CHECK_FALSE(has_target("collide_target"));  // rolled back
  const auto types = registered_kernel_types("RMSNormFwdOp");
  REQUIRE(std::count_if(types.begin(), types.end(), [](const auto& t) { return t.key == "cpu_rms_norm"; }) == 1);
  CHECK(std::find_if(types.begin(), types.end(), [](const auto& t) { return t.key == "cpu_rms_norm"; })->owner == "cpu");
  RMSNormFwdOp op({64});
  CHECK(op.key_for("rms_norm", rms_call(DType::float32)) == "cpu_rms_norm");
}

TEST_CASE("registrations for unknown ops fail the plugin, suggesting the nearest known names") {
  PluginHost host;
  host.load({corpus("misspelt")});
  CHECK(host.loaded().empty());
  const PluginLoadFailure* f = failure_of(host, "misspelt");
  REQUIRE(f != nullptr);
  CHECK(f->reason ==
        "registered what the ops do not accept: kernel type 'misspelt_rms_norm' is registered for op 'RMSNormOp', "
        "which this host does not know (did you mean 'RMSNormFwdOp'?); the known ops are the in-tree ones and those "
        "of the manifests (see 'tileops ops'); the kernel builder of target 'misspelt_target' is registered for op "
        "'GemmFwdOpp', which this host does not know (did you mean 'GemmFwdOp' or 'GeluFwdOp'?); the known ops are the in-tree ones "
        "and those of the manifests (see 'tileops ops')");
  CHECK_FALSE(has_target("misspelt_target"));
  CHECK_FALSE(has_kernel_type("RMSNormOp", "misspelt_rms_norm"));
}

TEST_CASE("kernel types that break the op's rules fail their plugin at load, not the op at construction") {
  load_backends();
  PluginHost host;
  host.load({corpus("rules")});
  CHECK(host.loaded().empty());
  REQUIRE(host.failures().size() == 5);
  const std::string prefix = "registered what the ops do not accept: ";
  const auto reason = [&](const char* plugin) {
    const PluginLoadFailure* f = failure_of(host, plugin);
    REQUIRE(f != nullptr);
    return f->reason;
  };
  CHECK(reason("rule_wrong_interface") ==
        prefix + "kernel type 'rule_wrong_interface_softmax' of RMSNormFwdOp (tileops::test_plugins::StubSoftmax) "
                 "implements SoftmaxFwdOp::Softmax, which RMSNormFwdOp does not call; its kernel interfaces are "
                 "'rms_norm' (RMSNormFwdOp::RmsNorm)");
  CHECK(reason("rule_second_general") ==
        prefix + "kernel type 'rule_general_rms_norm' of RMSNormFwdOp is general, but interface 'rms_norm' already has "
                 "the general implementation 'rms_norm_reference' (in-tree); an interface has at most one, the "
                 "portable reference: declare general = false");
  // The keys listed are those loaded before: the reference's, the cpu plugin's, then those of the
  // GPU plugins the build has.
  CHECK(reason("rule_pref_missing").starts_with(
      prefix + "kernel type 'rule_prefers_missing' of RMSNormFwdOp is preferred over 'cpu_rms_norm_v2', which no "
               "kernel type of RMSNormFwdOp has (plugins that load later cannot be named); the other keys of "
               "interface 'rms_norm' are 'rms_norm_reference' (in-tree), 'cpu_rms_norm' (plugin 'cpu')"));
  CHECK(reason("rule_pref_other") ==
        prefix + "kernel type 'rule_prefers_other_interface' of BatchNormFwdOp is preferred over "
                 "'batch_norm_infer_reference' (in-tree), which implements interface 'batch_norm_fwd_infer', not "
                 "interface 'batch_norm_fwd_train'");
  CHECK(reason("rule_intree_key") ==
        prefix + "kernel type 'rms_norm_reference' of RMSNormFwdOp reuses the in-tree key 'rms_norm_reference'; "
                 "choose another key");
  RMSNormFwdOp op({64});  // nothing of them reached the op
  CHECK(op.key_for("rms_norm", rms_call(DType::float32)) == "cpu_rms_norm");
}

TEST_CASE("a kernel type that ties with the cpu plugin's loads with a warning, dispatch names both plugins") {
  load_backends();
  PluginHost host;
  host.load({corpus("ambiguous")});
  REQUIRE(host.loaded().size() == 1);
  REQUIRE(host.loaded()[0].warnings.size() == 1);
  CHECK(host.loaded()[0].warnings[0] ==
        "kernel type 'ambiguous_rms_norm' (plugin 'ambiguous') and 'cpu_rms_norm' (plugin 'cpu') both implement "
        "interface 'rms_norm' of RMSNormFwdOp on cpu, and neither is preferred over the other: every call of "
        "RMSNormFwdOp on cpu that both accept (their refusals let through) fails with 'dispatch is ambiguous'. Fix: "
        "declare preferred_over {\"cpu_rms_norm\"} in 'ambiguous_rms_norm' (or {\"ambiguous_rms_norm\"} in "
        "'cpu_rms_norm'); an application may choose with prefer_kernels = RMSNormFwdOp=<key>, or leave one out with "
        "disable_kernels or its plugin with disable_plugins");
  RMSNormFwdOp op({64});
  CHECK_THROWS_WITH_AS(op.key_for("rms_norm", rms_call(DType::float32)),
                       doctest::Contains("cpu_rms_norm (plugin 'cpu'), ambiguous_rms_norm (plugin 'ambiguous') all "
                                         "apply and none is preferred over the others"),
                       ValueError);
}

TEST_CASE("the test op's own corpus plugin loads with no problem and no warning") {
  PluginHost host;
  host.load({corpus("good")});
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].warnings.empty());
}

TEST_CASE("an op known only from a manifest gets the name check at load, its class checks the rest when built") {
  // An application's op: a manifest names it, its class is not defined yet, so the interface
  // cannot be checked; the wrong interface below is left to the op's construction, which checks the kernel contracts.
  add_embedded_manifest("app_only.yaml", R"yaml(
AppOnlyFwdOp:
  family: app_only
  status: implemented
  signature:
    forall: {N: Dim}
    inputs:
      x: {dtype: float32, shape: "[N]"}
    outputs:
      y: {dtype: float32, shape: "[N]"}
  workloads:
  - {N: 8, label: tiny}
  roofline:
    flops: "N"
)yaml");
  Registrar reg("late_op_plugin");
  reg.register_kernel_type<tileops::test_plugins::PluginTestKernel>("AppOnlyFwdOp", "late_kernel");
  const auto accepted = plugin::review_registrations(reg);
  CHECK(accepted.problems.empty());
  CHECK(accepted.warnings.empty());
  reg.register_kernel_type<tileops::test_plugins::PluginTestKernel>("AppOnlyFwdOpp", "late_kernel");
  const auto refused = plugin::review_registrations(reg);
  REQUIRE(refused.problems.size() == 1);
  CHECK(refused.problems[0].find("op 'AppOnlyFwdOpp', which this host does not know (did you mean 'AppOnlyFwdOp'?)") !=
        std::string::npos);
}

TEST_CASE("suggestions are the known names within a few edits, closest first") {
  const std::vector<std::string> known{"GemmFwdOp", "RMSNormFwdOp", "LayerNormFwdOp", "SumFwdOp"};
  CHECK(nearest_names("RMSNormOp", known) == std::vector<std::string>{"RMSNormFwdOp"});
  CHECK(nearest_names("gemmfwdop", known).front() == "GemmFwdOp");  // case aside, the same name
  CHECK(nearest_names("Softmax", known).empty());
  CHECK(edit_distance("GemmFwdOpp", "GemmFwdOp") == 1);
  CHECK(did_you_mean("SumFwdOpp", known) == " (did you mean 'SumFwdOp'?)");
  CHECK(did_you_mean("Unrelated", known).empty());
}

TEST_CASE("a broken third-party plugin beside the cpu plugin leaves every built-in op working") {
  load_backends();
  REQUIRE(cpu_plugin_loaded());
  const auto cpu_keys = [] {
    std::vector<std::string> keys;
    for (const OpCatalogEntry& e : op_catalog()) {
      for (const auto& t : registered_kernel_types(e.name)) {
        if (t.owner == "cpu") keys.push_back(e.name + "/" + t.key);
      }
    }
    return keys;
  };
  const std::vector<std::string> before = cpu_keys();
  PluginHost host;
  host.load({corpus("collide"), corpus("misspelt"), corpus("rules"), corpus("garbage"), corpus("partial"),
             corpus("wrongabi"), corpus("throws"), corpus("abimismatch"), corpus("nosymbols"), corpus("renamed"),
             corpus("reentrant")});
  CHECK(host.loaded().empty());
  CHECK(host.failures().size() == 15);
  CHECK(cpu_keys() == before);
  const auto cap = [](std::string_view, std::int64_t v) { return std::min<std::int64_t>(v, 16); };
  for (const OpCatalogEntry& entry : op_catalog()) {
    CAPTURE(entry.name);
    const WorkloadCase c = signature_plan(entry.op_class()).workload_cases(cap).front();
    ParamMap params = testing::random_construction_tensors(c.params);
    if (entry.name == "AlibiFwdOp") params.set("device", Device::cpu());
    const std::unique_ptr<Op> fast = entry.make(params, {});
    const std::unique_ptr<Op> reference = entry.make(params, std::string(REFERENCE));
    const std::vector<Tensor> inputs = testing::random_inputs(c, Device::cpu());
    std::vector<Tensor> fast_inputs = testing::clone_all(inputs);
    std::vector<Tensor> ref_inputs = testing::clone_all(inputs);
    const OpOutputs got = fast->call(CallArgs(fast_inputs));
    const OpOutputs want = reference->call(CallArgs(ref_inputs));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(testing::compare(got[i], want[i]).ok);
  }
}

TEST_CASE("thousands of kernel types for one op are reviewed in near-linear time, their ambiguity warnings summed up") {
  load_backends();
  Registrar reg("many_types");
  constexpr int kTypes = 3000;
  for (int i = 0; i < kTypes; ++i) reg.add<ManyRmsNorm>("many_" + std::to_string(i));
  const auto review = plugin::review_registrations(reg);
  CHECK(review.problems.empty());
  // Sixteen kernel types are warned about one by one, each listing a few of its partners; the
  // rest are counted in one more warning.
  REQUIRE(review.warnings.size() == 17);
  CHECK(review.warnings[0].find("kernel type 'many_0' (plugin 'many_types') and ") == 0);
  CHECK(review.warnings[0].find("'many_1' (plugin 'many_types'), 'many_2' (plugin 'many_types'), ") !=
        std::string::npos);
  CHECK(review.warnings[0].find(" more) implement interface 'rms_norm' of RMSNormFwdOp on devices in common") !=
        std::string::npos);
  CHECK(review.warnings[16].find("more kernel type(s) of plugin 'many_types' for RMSNormFwdOp are ambiguous with others") !=
        std::string::npos);
  for (const std::string& w : review.warnings) CHECK(w.size() < 2000);
}
