#include "tileops/extend/op_class_builder.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "join.hpp"
#include "manifest/op_spec.hpp"
#include "op/defined_op_classes.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

std::string bracketed(const std::vector<std::string>& items) { return "[" + join(items) + "]"; }

struct DefinedClasses {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const OpClass>, std::less<>> by_name;
  // Every plan a class was built on: call records view their plan's names, so a record must
  // stay readable after its op and its class are gone.
  std::vector<std::shared_ptr<const OpClass::Plan>> plans;
};

DefinedClasses& defined_classes() {
  static DefinedClasses d;
  return d;
}

}  // namespace

void remember_op_class(const OpClass& cls) {
  DefinedClasses& d = defined_classes();
  std::lock_guard lock(d.mutex);
  if (d.by_name.find(cls.name()) == d.by_name.end()) d.by_name.emplace(cls.name(), std::make_shared<const OpClass>(cls));
  if (std::find(d.plans.begin(), d.plans.end(), cls.plan_ptr()) == d.plans.end()) d.plans.push_back(cls.plan_ptr());
}

std::shared_ptr<const OpClass> defined_op_class(std::string_view name) {
  DefinedClasses& d = defined_classes();
  std::lock_guard lock(d.mutex);
  auto it = d.by_name.find(name);
  return it == d.by_name.end() ? nullptr : it->second;
}

std::vector<std::string> defined_op_class_names() {
  DefinedClasses& d = defined_classes();
  std::lock_guard lock(d.mutex);
  std::vector<std::string> out;
  for (const auto& [name, cls] : d.by_name) out.push_back(name);
  return out;
}

OpClass::Builder OpClass::define(std::string name) { return Builder(std::move(name)); }

int OpClass::interface_index(std::string_view name) const {
  for (std::size_t i = 0; i < interfaces_.size(); ++i) {
    if (interfaces_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

OpClass::Builder::Builder(std::string name) { cls_.name_ = std::move(name); }

OpClass::Builder& OpClass::Builder::add_interface(InterfaceDecl decl) {
  if (cls_.interface_index(decl.name) >= 0) {
    throw TypeError(cls_.name_ + ": kernel interface '" + decl.name + "' is declared twice");
  }
  cls_.interfaces_.push_back(std::move(decl));
  return *this;
}

OpClass::Builder& OpClass::Builder::add_kernel_type(std::string key, KernelType type) {
  for (const auto& [existing, t] : cls_.kernel_types_) {
    if (existing == key) throw TypeError(cls_.name_ + ": kernel type key '" + key + "' is declared twice");
  }
  cls_.kernel_types_.emplace_back(std::move(key), std::make_shared<const KernelType>(std::move(type)));
  return *this;
}

OpClass::Builder& OpClass::Builder::delegate(std::string stage, std::string op) {
  for (const auto& d : cls_.delegate_types_) {
    if (d.stage == stage) throw TypeError(cls_.name_ + ": delegate stage '" + stage + "' is declared twice");
  }
  cls_.delegate_types_.push_back({std::move(stage), std::move(op)});
  return *this;
}

OpClass::Builder& OpClass::Builder::injected_parameter(std::string name) {
  cls_.injected_parameters_.push_back(std::move(name));
  return *this;
}

OpClass::Builder& OpClass::Builder::plan(std::shared_ptr<const Plan> plan) {
  cls_.plan_ = std::move(plan);
  return *this;
}

OpClass OpClass::Builder::build() {
  if (!cls_.plan_) cls_.plan_ = SignaturePlan::for_op(cls_.name_);
  const SignaturePlan& plan = signature_plan(cls_);
  if (!cls_.kernel_types_.empty() && cls_.interfaces_.empty()) {
    throw TypeError(cls_.name_ + ": holds kernel types but declares no kernel interfaces; declare interfaces instead");
  }
  std::vector<std::string> stages;
  for (const auto& d : cls_.delegate_types_) stages.push_back(d.stage);
  if (stages != plan.composition_stages()) {
    throw TypeError(cls_.name_ + ": delegate stages " + bracketed(stages) + " do not match the manifest composition " +
                    bracketed(plan.composition_stages()));
  }
  if (plan.spec().composition) {
    // The stage names agree; each stage's op class must agree too (a stage naming one of the
    // op's own kernels has no op class to compare).
    const auto& manifest_stages = plan.spec().composition->stages;
    for (std::size_t i = 0; i < cls_.delegate_types_.size() && i < manifest_stages.size(); ++i) {
      const DelegateDecl& d = cls_.delegate_types_[i];
      const std::string& op = manifest_stages[i].op;
      if (!op.empty() && d.op != op) {
        throw TypeError(cls_.name_ + ": stage '" + d.stage + "' holds a " + d.op + ", but the manifest composition says " +
                        op);
      }
    }
  }
  if (plan.has_call_time_tensor_input() && !plan.has_composition()) {
    cls_.compile_op_names_ = plan.compile_op_names();
  }
  remember_op_class(cls_);
  return std::move(cls_);
}

}  // namespace tileops
