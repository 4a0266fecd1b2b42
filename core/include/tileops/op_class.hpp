// OpClass: what C++ knows about an op class once, shared by all its instances (settled when
// the class is defined): the manifest key, the compiled
// signature plan, the in-tree kernel types, the kernel interfaces, the sub-op stages, the
// injected-parameter allowlist and the boundary operator names.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <typeindex>
#include <utility>
#include <vector>

#include "tileops/export.hpp"

namespace tileops {

// Kernel authors' types (tileops/extend/kernel.hpp).
struct CallSpecOps;
struct KernelType;

// One kernel interface an op calls: its name (the first argument of kernel_for) and type.
struct InterfaceDecl {
  std::string name;
  std::type_index type;
  std::string type_name;       // Interface::kName
  const CallSpecOps* request;  // the call spec type the interface takes
};

// One stage of a composite op and the sub-op class it may hold there.
struct DelegateDecl {
  std::string stage;
  std::string op;
};

class TILEOPS_API OpClass {
 public:
  // Defines a class (tileops/extend/op_class_builder.hpp).
  class Builder;
  // The compiled manifest entry, opaque outside the core.
  class Plan;

  // Starts the definition of op class `name` (its manifest key).
  static Builder define(std::string name);

  const std::string& name() const { return name_; }
  const Plan& plan() const { return *plan_; }
  const std::shared_ptr<const Plan>& plan_ptr() const { return plan_; }
  // In-tree implementations: (key, kernel type), in declaration order.
  const std::vector<std::pair<std::string, std::shared_ptr<const KernelType>>>& kernel_types() const {
    return kernel_types_;
  }
  const std::vector<InterfaceDecl>& interfaces() const { return interfaces_; }
  const std::vector<DelegateDecl>& delegate_types() const { return delegate_types_; }
  const std::vector<std::string>& injected_parameters() const { return injected_parameters_; }
  // Boundary operator names, one per effect branch; empty unless the manifest entry has a
  // call-time tensor input and no composition.
  const std::vector<std::string>& compile_op_names() const { return compile_op_names_; }
  bool has_boundary() const { return !compile_op_names_.empty(); }
  // Index of interface `name`, or -1.
  int interface_index(std::string_view name) const;

 private:
  OpClass() = default;
  std::string name_;
  std::shared_ptr<const Plan> plan_;
  std::vector<std::pair<std::string, std::shared_ptr<const KernelType>>> kernel_types_;
  std::vector<InterfaceDecl> interfaces_;
  std::vector<DelegateDecl> delegate_types_;
  std::vector<std::string> injected_parameters_;
  std::vector<std::string> compile_op_names_;
};

}  // namespace tileops
