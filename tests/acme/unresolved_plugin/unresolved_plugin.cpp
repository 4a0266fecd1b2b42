// Declares a function that no library defines and calls it from its registration.
#include "tileops/extend/plugin.hpp"

int defined_nowhere();

TILEOPS_PLUGIN(unresolved, "0.1.0", registrar) {
  if (defined_nowhere() != 0) registrar.register_detector("unresolved", [](const tileops::Device&) { return false; });
}
