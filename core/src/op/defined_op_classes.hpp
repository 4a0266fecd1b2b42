// The op classes defined so far in the process (OpClass::Builder::build), by name: what the
// plugin host checks a plugin's kernel types against when their op is not an in-tree one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/op_class.hpp"

namespace tileops {

// Remembers `cls` under its name unless a class of that name was defined before (tests define
// variants of one class; the first definition is the one kept), and keeps its plan alive for
// the process whatever happens to the class (call records view the plan).
void remember_op_class(const OpClass& cls);

// The first class defined under `name`, or nullptr.
std::shared_ptr<const OpClass> defined_op_class(std::string_view name);

// The names of the classes defined so far, sorted.
std::vector<std::string> defined_op_class_names();

}  // namespace tileops
