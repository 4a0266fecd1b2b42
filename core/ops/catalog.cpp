#include "tileops/ops/catalog.hpp"

#include <algorithm>

#include "join.hpp"
#include "op_catalog_entries.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

std::vector<OpCatalogEntry> build_catalog() {
  using Params = const ParamMap&;
  using T = const Target&;
  std::vector<OpCatalogEntry> c = generated_catalog_entries();
  // Every maker first rejects names that are not manifest parameters of its op.
  for (OpCatalogEntry& e : c) {
    e.make = [name = e.name, cls = e.op_class, make = std::move(e.make)](Params p, T t) {
      const auto& known = signature_plan(cls()).param_names();
      for (const auto& [given, value] : p) {
        if (std::find(known.begin(), known.end(), given) == known.end()) {
          const std::string list = join(known);
          throw TypeError(name + ": unknown parameter '" + given + "'; its parameters are: " +
                          (list.empty() ? "(none)" : list));
        }
      }
      // The construction check reports a missing or ill-typed parameter naming its manifest
      // type, and hands the makers the complete, converted map.
      return make(signature_plan(cls()).check_construction(p).params, t);
    };
  }
  return c;
}

}  // namespace

std::span<const OpCatalogEntry> op_catalog() {
  static const std::vector<OpCatalogEntry> catalog = build_catalog();
  return catalog;
}

const OpCatalogEntry& find_op(std::string_view name) {
  for (const OpCatalogEntry& e : op_catalog()) {
    if (e.name == name) return e;
  }
  const std::string known = join_with(op_catalog(), [](std::string& out, const OpCatalogEntry& e) { out += e.name; });
  throw ValueError("unknown op '" + std::string(name) + "'; known ops: " + known);
}

}  // namespace tileops
