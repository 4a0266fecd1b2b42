#include "signature/expression_eval.hpp"

#include "manifest/param_type.hpp"
#include "signature/expr/compiler.hpp"
#include "signature/expr/eval.hpp"

namespace tileops::expr {

Value evaluate_expression(std::string_view source, const std::vector<Variable>& variables) {
  Scope scope;
  std::vector<Val> slots;
  for (const Variable& b : variables) {
    NameInfo info;
    info.index = static_cast<int>(slots.size());
    std::string type = b.type;
    if (type == "Dim") {
      info.kind = kind_of(Base::Int);
    } else if (type == "Shape") {
      info.kind = kind_of(Base::IntList);
    } else {
      if (type.rfind("DType[", 0) == 0 && type.back() == ']') type = type.substr(6, type.size() - 7);
      const manifest::ParamType t = manifest::parse_param_type(type);
      info.kind = t.kind();
      info.members = t.members();
    }
    slots.push_back(val_from_value(b.value));
    scope.add(b.name, std::move(info));
  }
  const Expr e = compile_expression(source, scope);
  return value_from_val(evaluate(e.root, Env{slots, {}, {}}));
}

}  // namespace tileops::expr
