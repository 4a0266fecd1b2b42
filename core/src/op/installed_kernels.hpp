// The implementation table of one op instance: the in-tree kernel
// types merged with those backends registered for the op, checked against the kernel
// interfaces' contracts at construction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tileops/extend/kernel.hpp"
#include "tileops/op_class.hpp"

namespace tileops {

struct InstalledKernel {
  std::string key;
  std::string owner;  // the registering plugin; "" for in-tree kernel types and the application's
  bool in_tree = false;
  std::shared_ptr<const KernelType> type;
  int interface = -1;
  std::vector<int> outranks;  // installed indices this key is preferred over, transitively
  std::string_view record_key;  // `key` in process-lifetime storage, for call records
  // Set from the config when the instance was constructed: who disabled the key (it then never
  // serves), and who made it the op's preferred key (it then wins wherever it applies); empty
  // when neither. Both say where the setting came from, as setting_source() does.
  std::string disabled_by;
  std::string preferred_by;

  // Who brought the kernel type, for messages: "in-tree", "plugin 'x'" or "the application".
  std::string origin() const;
};

struct InstalledKernels {
  std::vector<InstalledKernel> kernels;
  std::vector<std::vector<int>> by_interface;  // installed indices per interface index

  // Merges `cls`'s kernel types with those registered for it and checks: keys are unique
  // (ValueError "reuse keys it has"), every key implements one of the op's interfaces
  // (TypeError "keys implement none of its kernel interfaces"), at most one general
  // implementation per interface (ValueError "has more than one general implementation"),
  // preferred_over names other keys of the same interface and general keys declare none
  // (ValueError), and preferences form no cycle (ValueError "preferences form a cycle through").
  // With `include_registered` false, only the class's own kernel types are installed, and the
  // config's disable_kernels and prefer_kernels are not applied (the reference target runs the
  // class's reference kernels whatever the config says).
  static InstalledKernels install(const OpClass& cls, bool include_registered);
};

}  // namespace tileops
