// manifest_plan and compile_manifest_entry: plans compiled on first use, once per process, or
// from manifest text outside the process's manifests.
#include <map>
#include <mutex>

#include "config_freeze.hpp"
#include "manifest/manifest_registry.hpp"
#include "signature/plan_builder.hpp"
#include "tileops/config.hpp"
#include "tileops/extend/manifest.hpp"

namespace tileops {
namespace {

std::shared_ptr<const SignaturePlan> build_or_throw(const OpSpec& spec) {
  detail::BuildResult r = detail::build_plan(spec);
  if (!r.plan) throw ManifestError(std::move(r.problems));
  return r.plan;
}

// The manifest registry of the process (loaded on first use from the config's manifest_path)
// and the plans compiled from it.
struct ProcessPlans {
  std::mutex mutex;
  std::unique_ptr<manifest::ManifestRegistry> registry;
  std::map<std::string, std::shared_ptr<const SignaturePlan>, std::less<>> plans;
  // The manifests programs embedded before the registry loaded, as name and text.
  std::vector<std::pair<std::string, std::string>> embedded;

  manifest::ManifestRegistry& manifests() {
    if (!registry) {
      detail::freeze_load_time_config();
      registry = std::make_unique<manifest::ManifestRegistry>(config().manifest_path, embedded);
    }
    return *registry;
  }
};

ProcessPlans& process_plans() {
  static ProcessPlans p;
  return p;
}

}  // namespace

std::shared_ptr<const OpClass::Plan> manifest_plan(std::string_view op_name) {
  ProcessPlans& p = process_plans();
  std::lock_guard lock(p.mutex);
  if (const auto it = p.plans.find(op_name); it != p.plans.end()) return it->second;
  std::shared_ptr<const SignaturePlan> plan = build_or_throw(p.manifests().spec(op_name));
  p.plans.emplace(std::string(op_name), plan);
  return plan;
}

void add_embedded_manifest(std::string_view name, std::string_view yaml) {
  ProcessPlans& p = process_plans();
  std::lock_guard lock(p.mutex);
  if (p.registry) {
    p.registry->add_embedded(std::string(name), std::string(yaml));
  } else {
    p.embedded.emplace_back(name, yaml);
  }
}

std::vector<std::string> SignaturePlan::manifest_op_names() {
  ProcessPlans& p = process_plans();
  std::lock_guard lock(p.mutex);
  return p.manifests().names();
}

std::shared_ptr<const OpClass::Plan> compile_manifest_entry(std::string_view yaml, std::string_view op_name,
                                                            std::string_view file) {
  manifest::LoadedFile loaded = manifest::load_manifest_text(yaml, std::string(file));
  std::vector<ManifestProblem> problems;
  for (const ManifestProblem& p : loaded.problems) {
    if (p.op == op_name || p.op == "(file)") problems.push_back(p);
  }
  if (!problems.empty()) throw ManifestError(std::move(problems));
  for (const OpSpec& spec : loaded.specs) {
    if (spec.name == op_name) return build_or_throw(spec);
  }
  throw ValueError("the manifest text has no entry named '" + std::string(op_name) + "'");
}

}  // namespace tileops
