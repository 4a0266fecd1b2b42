// Declares the name "other" but is built as libtileops_renamed.so: the host must refuse it
// before registration.
#include "tileops/extend/plugin.hpp"

using namespace tileops;

TILEOPS_PLUGIN(other, "0.1.0", registrar) {
  registrar.register_detector("renamed_target", [](const Device&) { return false; });
}
