// The body of the duplicate test plugins: registers a target of its own ("fresh_<kind>": a
// detector and a builder), then one thing the good plugin already registered, named by `kind`:
// "kernel", "builder", "detector" or "runtime". The registry refuses the duplicate; the host
// must roll back the rest.
#pragma once

#include <string>
#include <string_view>

#include "plugin_test_types.hpp"

namespace tileops::test_plugins {

inline void register_fresh_then_duplicate(Registrar& registrar, std::string_view kind) {
  const std::string fresh = "fresh_" + std::string(kind);
  registrar.register_detector(fresh, [](const Device&) { return false; });
  registrar.register_kernel_builder(kOp, fresh, build_empty_kernel);
  if (kind == "kernel") registrar.register_kernel_type<PluginTestKernel>(kOp, "good_kernel");
  if (kind == "builder") registrar.register_kernel_builder(kOp, "plugtarget", build_empty_kernel);
  if (kind == "detector") registrar.register_detector("plugtarget", [](const Device&) { return false; });
  if (kind == "runtime") registrar.register_device_runtime(std::make_shared<HostBackedRuntime>("plugdev"));
}

}  // namespace tileops::test_plugins
