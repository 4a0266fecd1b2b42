// The ops a plugin may register for, as the plugin host knows them when the plugin loads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/op_class.hpp"

namespace tileops::plugin {

class OpCatalogue {
 public:
  // The ops of this process: the in-tree ops, the op classes defined so far, and every entry of
  // the manifests (built in, and those of the config's manifest_path).
  static OpCatalogue of_process();
  // A catalogue of the ops named `names`; find_class still looks among the in-tree ops and
  // the classes defined so far.
  explicit OpCatalogue(std::vector<std::string> names);

  // True when `op` is one of the known ops.
  bool knows(std::string_view op) const;
  // The class of `op`, defining an in-tree one on first use; nullptr when no class of that name
  // is defined yet (an application's op known from a manifest only) or it cannot be defined (a
  // broken manifest entry, which constructing the op reports).
  std::shared_ptr<const OpClass> find_class(std::string_view op) const;
  // Every known op name, sorted.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

}  // namespace tileops::plugin
