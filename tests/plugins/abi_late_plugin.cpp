// Written by hand: ABI facts of another tileops minor version, computed when the library is
// initialised, so that the file holds no value for them: the host finds the mismatch once the
// library is open, before calling any of its functions.
#include "tileops/extend/plugin.hpp"

namespace {

tileops::plugin_abi::AbiFacts computed_facts() {
  tileops::plugin_abi::AbiFacts facts = TILEOPS_PLUGIN_ABI_FACTS;
  facts.tileops_minor += 1;
  return facts;
}

}  // namespace

TILEOPS_PLUGIN_EXPORT const tileops::plugin_abi::AbiFacts tileops_plugin_abi_facts = computed_facts();
TILEOPS_PLUGIN_EXPORT int tileops_plugin_abi_version() noexcept { return TILEOPS_PLUGIN_ABI_VERSION; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_name() noexcept { return "abi_late"; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_version() noexcept { return "0.1.0"; }
TILEOPS_PLUGIN_EXPORT int tileops_plugin_register(tileops::Registrar* registrar, char* message,
                                                  std::size_t capacity) noexcept {
  return tileops::plugin_abi::run_registration(
      [](tileops::Registrar& r) { r.register_detector("abi_late_target", [](const tileops::Device&) { return false; }); },
      registrar, message, capacity);
}
