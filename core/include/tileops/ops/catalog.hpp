// The catalog of in-tree ops: construct any of them by manifest name from a ParamMap, for
// programs that pick ops at run time (the `tileops run` and `tileops bench` commands, bindings).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tileops/op.hpp"

namespace tileops {

struct OpCatalogEntry {
  std::string name;                     // the manifest key, e.g. "RMSNormFwdOp"
  const OpClass& (*op_class)();         // the class record (compiles its plan on first use)
  // Constructs the op from manifest parameters by name; missing ones take the manifest's
  // defaults, and a string names a dtype or device. Throws TypeError for a name the manifest
  // does not declare, a missing required parameter ("missing required parameter
  // 'normalized_shape' (list[int])") or a value not of the declared type (naming the type),
  // plus whatever else the construction check raises.
  std::function<std::unique_ptr<Op>(const ParamMap& params, const Target& target)> make;
};

// Every in-tree op, sorted by name.
TILEOPS_API std::span<const OpCatalogEntry> op_catalog();
// The entry named `name`. Throws ValueError listing the known names when there is none.
TILEOPS_API const OpCatalogEntry& find_op(std::string_view name);

}  // namespace tileops
