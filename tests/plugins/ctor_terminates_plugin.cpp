// A static constructor that ends in std::terminate while the dynamic loader opens the library
// (an exception leaving a noexcept function): the host's terminate handler must name this
// plugin before the process ends.
#include <stdexcept>

#include "tileops/extend/plugin.hpp"

namespace {

[[noreturn]] void fail() { throw std::logic_error("state built in a noexcept function"); }
void build_state() noexcept { fail(); }

struct Unbuildable {
  Unbuildable() { build_state(); }
};
const Unbuildable unbuildable;

}  // namespace

TILEOPS_PLUGIN(ctor_terminates, "0.1.0", registrar) { static_cast<void>(registrar); }
