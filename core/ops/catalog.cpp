#include "tileops/ops/catalog.hpp"

#include <algorithm>
#include <deque>
#include <mutex>

#include "join.hpp"
#include "logging.hpp"
#include "op_catalog_entries.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

// `entry` with a maker that first rejects names that are not manifest parameters of its op.
OpCatalogEntry checked(OpCatalogEntry entry) {
  using Params = const ParamMap&;
  using T = const Target&;
  entry.make = [name = entry.name, cls = entry.op_class, make = std::move(entry.make)](Params p, T t) {
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
  return entry;
}

// The catalog: the in-tree entries, then those added. A deque, so that entries never move.
struct Catalog {
  std::mutex mutex;
  std::deque<OpCatalogEntry> entries;

  Catalog() {
    for (OpCatalogEntry& e : generated_catalog_entries()) entries.push_back(checked(std::move(e)));
  }
  const OpCatalogEntry* find(std::string_view name) const {
    for (const OpCatalogEntry& e : entries) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
};

Catalog& catalog() {
  static Catalog c;
  return c;
}

}  // namespace

std::vector<std::reference_wrapper<const OpCatalogEntry>> op_catalog() {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  std::vector<std::reference_wrapper<const OpCatalogEntry>> out(c.entries.begin(), c.entries.end());
  std::sort(out.begin(), out.end(), [](const OpCatalogEntry& a, const OpCatalogEntry& b) { return a.name < b.name; });
  return out;
}

const OpCatalogEntry& find_op(std::string_view name) {
  {
    Catalog& c = catalog();
    std::lock_guard lock(c.mutex);
    if (const OpCatalogEntry* e = c.find(name)) return *e;
  }
  const std::string known = join_with(op_catalog(), [](std::string& out, const OpCatalogEntry& e) { out += e.name; });
  throw ValueError("unknown op '" + std::string(name) + "'; known ops: " + known);
}

void add_op_catalog_entries(std::vector<OpCatalogEntry> entries) {
  Catalog& c = catalog();
  std::lock_guard lock(c.mutex);
  for (OpCatalogEntry& e : entries) {
    if (const OpCatalogEntry* there = c.find(e.name)) {
      if (there->op_class != e.op_class) {
        log().warn("the op catalog has an op named {} already; another library's entry of that name is left out",
                   e.name);
      }
      continue;
    }
    c.entries.push_back(checked(std::move(e)));
  }
}

}  // namespace tileops
