// Calls load_backends() from its registration, as a plugin constructing an op would: the host
// must refuse it instead of deadlocking, and roll back what the plugin registered before.
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(reentrant, "0.1.0", registrar) {
  registrar.register_detector("reentrant_target", [](const tileops::Device&) { return false; });
  tileops::load_backends();
}
