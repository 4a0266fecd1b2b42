// Registers a builder the good plugin already registered (see duplicate_registration.hpp).
#include "duplicate_registration.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(dup_builder, "0.1.0", registrar) { tileops::test_plugins::register_fresh_then_duplicate(registrar, "builder"); }
