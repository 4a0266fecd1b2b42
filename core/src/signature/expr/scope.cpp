#include "signature/expr/scope.hpp"

namespace tileops::expr {

void Scope::add(std::string name, NameInfo info) {
  for (auto& [n, i] : names_) {
    if (n == name) {
      i = std::move(info);
      return;
    }
  }
  names_.emplace_back(std::move(name), std::move(info));
}

const NameInfo* Scope::find(std::string_view name) const {
  for (const auto& [n, i] : names_) {
    if (n == name) return &i;
  }
  return nullptr;
}

std::string_view Scope::slot_name(int index) const {
  for (const auto& [n, i] : names_) {
    if (i.what == NameInfo::What::Slot && i.index == index) return n;
  }
  return {};
}

std::string_view Scope::tensor_name(int index) const {
  for (const auto& [n, i] : names_) {
    if (i.what == NameInfo::What::Tensor && i.index == index) return n;
  }
  return {};
}

}  // namespace tileops::expr
