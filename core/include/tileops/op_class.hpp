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
#include "tileops/extend/kernel.hpp"

namespace tileops {

class SignaturePlan;

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
  class Builder;

  // Starts the definition of op class `name` (its manifest key).
  static Builder define(std::string name);

  const std::string& name() const { return name_; }
  const SignaturePlan& plan() const { return *plan_; }
  const std::shared_ptr<const SignaturePlan>& plan_ptr() const { return plan_; }
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
  std::shared_ptr<const SignaturePlan> plan_;
  std::vector<std::pair<std::string, std::shared_ptr<const KernelType>>> kernel_types_;
  std::vector<InterfaceDecl> interfaces_;
  std::vector<DelegateDecl> delegate_types_;
  std::vector<std::string> injected_parameters_;
  std::vector<std::string> compile_op_names_;
};

// Builds an OpClass. Use it once per class, inside the class's static op_class() accessor
// (a function-local static, so the record is built once, thread-safely):
//
//   const OpClass& RMSNormFwdOp::op_class() {
//     static const OpClass cls = OpClass::define("RMSNormFwdOp")
//         .interface<RMSNormFwdInterface>("rms_norm")
//         .kernel_type<ReferenceRMSNorm>("rms_norm_reference")
//         .build();
//     return cls;
//   }
class TILEOPS_API OpClass::Builder {
 public:
  explicit Builder(std::string name);

  // Declares kernel interface `I` under `name`.
  template <class I>
    requires std::derived_from<I, KernelInterface>
  Builder& interface(std::string name) {
    return add_interface(InterfaceDecl{std::move(name), typeid(I), std::string(I::kName),
                                       &call_spec_ops<typename I::Request>()});
  }
  // Declares generated kernel interface `I` under its own name (I::slot).
  template <class I>
    requires std::derived_from<I, KernelInterface> && requires { I::slot; }
  Builder& interface() {
    return interface<I>(std::string(I::slot));
  }
  // Adds in-tree implementation `Impl` under `key`.
  template <KernelImplementation Impl>
  Builder& kernel_type(std::string key) {
    return add_kernel_type(std::move(key), make_kernel_type<Impl>());
  }
  Builder& add_kernel_type(std::string key, KernelType type);
  Builder& add_interface(InterfaceDecl decl);
  // Declares that stage `stage` may hold a sub-op of class `op`. Stage order is declaration order.
  Builder& delegate(std::string stage, std::string op);
  // Allows constructor argument `name` beyond the manifest parameters and the target.
  Builder& injected_parameter(std::string name);
  // Uses `plan` instead of the manifest registry's (tests compile plans from YAML strings).
  Builder& plan(std::shared_ptr<const SignaturePlan> plan);

  // Finishes the record. Compiles the signature plan (SignaturePlan::for_op) unless one was
  // given, and checks the class against it: kernel types without interfaces ("declare
  // interfaces instead"), duplicate interface names or keys, and sub-op stages that differ
  // from the manifest's composition raise TypeError. The first class built under a name is
  // also remembered for the plugin host, which checks plugins' kernel types against it when
  // they load (a class defined before load_backends() gets the full check at load).
  OpClass build();

 private:
  OpClass cls_;
};

}  // namespace tileops
