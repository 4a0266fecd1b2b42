// The test plugin corpus built by tests/plugins, and registry probes for what a plugin left.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>

#include "support/plugin_test_fwd_op.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops::test {

// The directory of one corpus case (tests/plugins/CMakeLists.txt lists them). Defines
// PluginTestFwdOp's class first, so that a host loading the case checks its registrations against it.
inline std::filesystem::path corpus(std::string_view name) {
  PluginTestFwdOp::op_class();
  return std::filesystem::path(TILEOPS_TEST_PLUGIN_DIR) / name;
}

inline bool has_target(std::string_view target) {
  const auto targets = registered_targets();
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

inline bool has_kernel_type(std::string_view op, std::string_view key) {
  const auto types = registered_kernel_types(op);
  return std::any_of(types.begin(), types.end(), [&](const RegisteredKernelType& t) { return t.key == key; });
}

inline bool has_runtime(std::string_view device_type) {
  return find_device_runtime(DeviceType::intern(device_type)) != nullptr;
}

}  // namespace tileops::test
