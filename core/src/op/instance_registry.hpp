// Every live op instance by its key, so that a boundary operator (or a graph node) can find
// the instance it was recorded for. Keys are never reused within the process.
#pragma once

#include <cstddef>
#include <string>

namespace tileops {

class Op;

// Registers `op` and returns its new key "<OpName>#<n>".
std::string register_instance(Op* op);
void unregister_instance(const std::string& key);
// The live instance registered under `key`, or nullptr.
Op* find_instance(const std::string& key);
// How many instances are registered now (every op constructed and not yet destroyed).
std::size_t live_instance_count();

}  // namespace tileops
