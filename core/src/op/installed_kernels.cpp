#include "op/installed_kernels.hpp"

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backend/registry.hpp"
#include "join.hpp"
#include "logging.hpp"
#include "setting_source.hpp"
#include "signature/expr/intern.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops {
namespace {

InstalledKernel installed(const std::string& key, const std::string& owner, bool in_tree,
                          std::shared_ptr<const KernelType> type) {
  InstalledKernel k;
  k.key = key;
  k.owner = owner;
  k.in_tree = in_tree;
  k.type = std::move(type);
  return k;
}

int find_key(const std::vector<InstalledKernel>& kernels, const std::string& key) {
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

// Fails on a cycle in the preference graph, then fills each kernel's transitive `outranks`.
void resolve_preferences(const std::string& op, std::vector<InstalledKernel>& kernels,
                         const std::vector<std::vector<int>>& direct) {
  enum class Mark { unvisited, active, done };
  std::vector<Mark> mark(kernels.size(), Mark::unvisited);
  std::vector<int> path;
  std::function<void(int)> visit = [&](int k) {
    mark[k] = Mark::active;
    path.push_back(k);
    for (int next : direct[k]) {
      if (mark[next] == Mark::active) {
        std::vector<std::string> cycle;
        for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it) cycle.push_back(kernels[*it].key);
        cycle.push_back(kernels[next].key);
        std::string chain;
        for (const auto& key : cycle) chain += (chain.empty() ? "" : " -> ") + key;
        throw ValueError(op + ": kernel preferences form a cycle through " + chain);
      }
      if (mark[next] == Mark::unvisited) visit(next);
    }
    path.pop_back();
    mark[k] = Mark::done;
  };
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    if (mark[k] == Mark::unvisited) visit(static_cast<int>(k));
  }
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    std::vector<int> stack = direct[k];
    std::vector<bool> seen(kernels.size(), false);
    while (!stack.empty()) {
      const int next = stack.back();
      stack.pop_back();
      if (seen[next]) continue;
      seen[next] = true;
      kernels[k].outranks.push_back(next);
      stack.insert(stack.end(), direct[next].begin(), direct[next].end());
    }
  }
}

// True the first time `what` is asked about in the process: a setting that names nothing is
// warned about once, not at every construction.
bool first_warning(const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard lock(mutex);
  return warned.insert(what).second;
}

// Warns about each disable_kernels key that no built-in op's kernel type and no registered one
// has (an application's own op classes are not looked at: they may not be defined yet).
void warn_unknown_disabled_keys(const Config& c) {
  std::set<std::string> known;
  for (const std::string& key : backend::registered_kernel_keys()) known.insert(key);
  for (const OpCatalogEntry& entry : op_catalog()) {
    for (const auto& [key, type] : entry.op_class().kernel_types()) known.insert(key);
  }
  for (const std::string& key : c.disable_kernels) {
    if (!known.contains(key) && first_warning("disable_kernels:" + key)) {
      log().warn("{} names '{}', which no kernel type of the built-in ops or the loaded plugins has",
                 setting_source("disable_kernels", c.disable_kernels_origin), key);
    }
  }
}

// True when `c` disables other keys than the config the last construction saw: the keys are
// looked up once per setting, not at every construction, and each setting is looked at.
bool disabled_keys_changed(const Config& c) {
  static std::mutex mutex;
  static std::vector<std::string> checked;
  std::lock_guard lock(mutex);
  if (checked == c.disable_kernels) return false;
  checked = c.disable_kernels;
  return true;
}

// Marks the keys the config disables, and the key it prefers for `op`.
void apply_kernel_settings(const std::string& op, const Config& c, std::vector<InstalledKernel>& kernels) {
  if (!c.disable_kernels.empty() && disabled_keys_changed(c)) warn_unknown_disabled_keys(c);
  for (const std::string& key : c.disable_kernels) {
    const int k = find_key(kernels, key);
    if (k >= 0) kernels[k].disabled_by = setting_source("disable_kernels", c.disable_kernels_origin);
  }
  for (const KernelPreference& p : c.prefer_kernels) {
    if (p.op != op) continue;
    const int k = find_key(kernels, p.key);
    if (k >= 0) {
      kernels[k].preferred_by = setting_source("prefer_kernels", c.prefer_kernels_origin);
    } else if (first_warning(op + "=" + p.key)) {
      std::vector<std::string> keys;
      for (const InstalledKernel& kernel : kernels) keys.push_back(kernel.key);
      log().warn("{} names {}={}, but {} has no kernel type of that key (its keys: {}); the preference is ignored",
                 setting_source("prefer_kernels", c.prefer_kernels_origin), op, p.key, op, join(keys));
    }
  }
}

}  // namespace

std::string InstalledKernel::origin() const { return in_tree ? "in-tree" : owner_phrase(owner); }

InstalledKernels InstalledKernels::install(const OpClass& cls, bool include_registered) {
  const std::string& op = cls.name();
  InstalledKernels table;
  for (const auto& [key, type] : cls.kernel_types()) table.kernels.push_back(installed(key, "", true, type));
  for (const RegisteredKernelType& reg : include_registered ? registered_kernel_types(op) : std::vector<RegisteredKernelType>{}) {
    if (find_key(table.kernels, reg.key) >= 0) {
      throw ValueError(op + ": kernel types registered by " + owner_phrase(reg.owner) + " reuse keys it has: '" +
                       reg.key + "' is already an in-tree key");
    }
    table.kernels.push_back(installed(reg.key, reg.owner, false, reg.type));
  }

  const auto& interfaces = cls.interfaces();
  table.by_interface.resize(interfaces.size());
  std::vector<std::string> strays;
  for (std::size_t k = 0; k < table.kernels.size(); ++k) {
    InstalledKernel& kernel = table.kernels[k];
    kernel.record_key = expr::intern(kernel.key);
    for (std::size_t i = 0; i < interfaces.size(); ++i) {
      if (interfaces[i].type == kernel.type->interface) kernel.interface = static_cast<int>(i);
    }
    if (kernel.interface < 0) {
      strays.push_back("'" + kernel.key + "' (" + kernel.origin() + ": " + kernel.type->class_name + " implements " +
                       kernel.type->interface_name + ")");
    } else {
      table.by_interface[kernel.interface].push_back(static_cast<int>(k));
    }
  }
  if (!strays.empty()) {
    std::vector<std::string> names;
    for (const auto& i : interfaces) names.push_back(i.type_name);
    throw TypeError(op + ": keys implement none of its kernel interfaces: " + join(strays) + "; its interfaces are " +
                    (names.empty() ? "(none)" : join(names)));
  }

  std::vector<std::vector<int>> direct(table.kernels.size());
  for (std::size_t i = 0; i < interfaces.size(); ++i) {
    std::vector<std::string> generals;
    for (int k : table.by_interface[i]) {
      if (table.kernels[k].type->general) generals.push_back(table.kernels[k].key + " (" + table.kernels[k].origin() + ")");
    }
    if (generals.size() > 1) {
      throw ValueError(op + ": interface '" + interfaces[i].name + "' has more than one general implementation: " +
                       join(generals));
    }
  }
  for (std::size_t k = 0; k < table.kernels.size(); ++k) {
    const InstalledKernel& kernel = table.kernels[k];
    if (kernel.type->general && !kernel.type->preferred_over.empty()) {
      throw ValueError(op + ": general implementation '" + kernel.key + "' (" + kernel.origin() +
                       ") declares preferred_over; a general implementation ranks below all others");
    }
    for (const std::string& other : kernel.type->preferred_over) {
      const int target = find_key(table.kernels, other);
      if (target < 0 || target == static_cast<int>(k) || table.kernels[target].interface != kernel.interface) {
        throw ValueError(op + ": '" + kernel.key + "' (" + kernel.origin() + ") is preferred over '" + other +
                         "', which is not another implementation of interface '" + interfaces[kernel.interface].name + "'");
      }
      direct[k].push_back(target);
    }
  }
  resolve_preferences(op, table.kernels, direct);
  if (include_registered) apply_kernel_settings(op, config(), table.kernels);
  return table;
}

}  // namespace tileops
