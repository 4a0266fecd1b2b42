// Written by hand: the plugin ABI version of this header, but ABI facts of a build with another
// libstdc++ string ABI and another Boost. The facts are a constant, so the host reads them from
// the file and refuses the plugin before opening it: its static constructor must never run.
#include <cstdlib>

#include "tileops/extend/plugin.hpp"

namespace {

constexpr tileops::plugin_abi::AbiFacts forged_facts() {
  tileops::plugin_abi::AbiFacts facts = TILEOPS_PLUGIN_ABI_FACTS;
  facts.cxx11_string_abi = 0;
  facts.boost_version += 100;
  return facts;
}

struct Marker {
  Marker() { setenv("TILEOPS_TEST_ABI_MISMATCH_OPENED", "1", 1); }
};
const Marker marker;

}  // namespace

TILEOPS_PLUGIN_EXPORT const tileops::plugin_abi::AbiFacts tileops_plugin_abi_facts = forged_facts();
TILEOPS_PLUGIN_EXPORT int tileops_plugin_abi_version() noexcept { return TILEOPS_PLUGIN_ABI_VERSION; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_name() noexcept { return "abi_mismatch"; }
TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_version() noexcept { return "0.1.0"; }
TILEOPS_PLUGIN_EXPORT int tileops_plugin_register(tileops::Registrar* registrar, char* message,
                                                  std::size_t capacity) noexcept {
  return tileops::plugin_abi::run_registration(
      [](tileops::Registrar& r) { r.register_detector("abi_mismatch_target", [](const tileops::Device&) { return false; }); },
      registrar, message, capacity);
}
