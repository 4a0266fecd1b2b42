// A static constructor that throws while the dynamic loader opens the library: the host must
// end the process with a message naming this plugin, never hang or abort silently.
#include <stdexcept>

#include "tileops/extend/plugin.hpp"

namespace {

struct Unbuildable {
  Unbuildable() { throw std::runtime_error("static state could not be built"); }
};
const Unbuildable unbuildable;

}  // namespace

TILEOPS_PLUGIN(ctor_throws, "0.1.0", registrar) { static_cast<void>(registrar); }
