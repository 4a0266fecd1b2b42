#include "tileops/op_class.hpp"

#include <algorithm>

#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return "[" + s + "]";
}

}  // namespace

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

OpClass::Builder& OpClass::Builder::plan(std::shared_ptr<const SignaturePlan> plan) {
  cls_.plan_ = std::move(plan);
  return *this;
}

OpClass OpClass::Builder::build() {
  if (!cls_.plan_) cls_.plan_ = SignaturePlan::for_op(cls_.name_);
  const SignaturePlan& plan = *cls_.plan_;
  if (!cls_.kernel_types_.empty() && cls_.interfaces_.empty()) {
    throw TypeError(cls_.name_ + ": holds kernel types but declares no kernel interfaces; declare interfaces instead");
  }
  std::vector<std::string> stages;
  for (const auto& d : cls_.delegate_types_) stages.push_back(d.stage);
  if (stages != plan.composition_stages()) {
    throw TypeError(cls_.name_ + ": delegate stages " + join(stages) + " do not match the manifest composition " +
                    join(plan.composition_stages()));
  }
  if (plan.has_call_time_tensor_input() && !plan.has_composition()) {
    cls_.compile_op_names_ = plan.boundary_operator_names();
  }
  return std::move(cls_);
}

}  // namespace tileops
