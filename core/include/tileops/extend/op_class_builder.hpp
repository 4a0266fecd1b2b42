// OpClass::Builder: how an op class is defined, once, in its op_class() accessor. Generated op
// classes (tileops-opgen) use it; a hand-written op class does the same.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <utility>

#include "tileops/export.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/op_class.hpp"

namespace tileops {

// Builds an OpClass. Use it once per class, inside the class's static op_class() accessor
// (a function-local static, so the record is built once, thread-safely):
//
//   const OpClass& SoftcapFwdOp::op_class() {
//     static const OpClass cls = OpClass::define("SoftcapFwdOp")
//         .interface<ops::SoftcapFwdOp::Softcap>()
//         .kernel_type<ref::SoftcapFwdOp::Softcap>("softcap_reference")
//         .build();
//     return cls;
//   }
//
// tileops-opgen writes this accessor for every op of a manifest with an `interfaces:` section.
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
  // Uses `plan` instead of the plan compiled from the manifest registry's entry (the core's
  // tests compile plans from manifest text).
  Builder& plan(std::shared_ptr<const Plan> plan);

  // Finishes the record. Compiles the plan of the manifest entry named like the class unless one
  // was given, and checks the class against it: kernel types without interfaces ("declare
  // interfaces instead"), duplicate interface names or keys, and sub-op stages that differ
  // from the manifest's composition raise TypeError. The first class built under a name is
  // also remembered for the plugin host, which checks plugins' kernel types against it when
  // they load (a class defined before load_backends() gets the full check at load).
  OpClass build();

 private:
  OpClass cls_;
};

}  // namespace tileops
