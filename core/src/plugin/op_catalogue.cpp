#include "plugin/op_catalogue.hpp"

#include <algorithm>

#include "logging.hpp"
#include "op/defined_op_classes.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"

namespace tileops::plugin {

OpCatalogue::OpCatalogue(std::vector<std::string> names) : names_(std::move(names)) {
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
}

OpCatalogue OpCatalogue::of_process() {
  std::vector<std::string> names;
  for (const OpCatalogEntry& e : op_catalog()) names.push_back(e.name);
  for (std::string& name : SignaturePlan::manifest_op_names()) names.push_back(std::move(name));
  for (std::string& name : defined_op_class_names()) names.push_back(std::move(name));
  return OpCatalogue(std::move(names));
}

bool OpCatalogue::knows(std::string_view op) const {
  return std::binary_search(names_.begin(), names_.end(), op);
}

std::shared_ptr<const OpClass> OpCatalogue::find_class(std::string_view op) const {
  if (auto cls = defined_op_class(op)) return cls;
  for (const OpCatalogEntry& e : op_catalog()) {
    if (e.name != op) continue;
    try {
      e.op_class();
    } catch (const Error& error) {
      log().debug("{} cannot be defined ({}); its kernel types are checked when it is constructed", e.name, error.what());
      return nullptr;
    }
    return defined_op_class(op);
  }
  return nullptr;
}

}  // namespace tileops::plugin
