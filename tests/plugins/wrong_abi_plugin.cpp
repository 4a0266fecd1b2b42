// Written by hand instead of with TILEOPS_PLUGIN: claims an ABI version this host does not
// speak. Its registration function must never run.
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN_EXPORT int tileops_plugin_abi_version() noexcept { return 999; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_name() noexcept { return "wrongabi"; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_version() noexcept { return "0.1.0"; }
TILEOPS_PLUGIN_EXPORT int tileops_plugin_register(tileops::Registrar* registrar, char* message,
                                                  std::size_t capacity) noexcept {
  return tileops::plugin_abi::run_registration(
      [](tileops::Registrar& r) { r.register_detector("wrongabi_target", [](const tileops::Device&) { return false; }); },
      registrar, message, capacity);
}
