#include "op/installed_kernels.hpp"

#include <algorithm>
#include <functional>

#include "backend/registry.hpp"
#include "join.hpp"
#include "signature/expr/intern.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops {
namespace {

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

}  // namespace

std::string InstalledKernel::origin() const { return in_tree ? "in-tree" : owner_phrase(owner); }

InstalledKernels InstalledKernels::install(const OpClass& cls, bool include_registered) {
  const std::string& op = cls.name();
  InstalledKernels table;
  for (const auto& [key, type] : cls.kernel_types()) table.kernels.push_back({key, "", true, type, -1, {}});
  for (const RegisteredKernelType& reg : include_registered ? registered_kernel_types(op) : std::vector<RegisteredKernelType>{}) {
    if (find_key(table.kernels, reg.key) >= 0) {
      throw ValueError(op + ": kernel types registered by " + owner_phrase(reg.owner) + " reuse keys it has: '" +
                       reg.key + "' is already an in-tree key");
    }
    table.kernels.push_back({reg.key, reg.owner, false, reg.type, -1, {}});
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
  return table;
}

}  // namespace tileops
