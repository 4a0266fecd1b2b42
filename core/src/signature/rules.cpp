#include "signature/rules.hpp"

#include <algorithm>

namespace tileops::detail {

bool rule_ready(const Rule& rule, const CheckState& f) {
  return std::all_of(rule.expr.slots.begin(), rule.expr.slots.end(),
                     [&f](int s) { return f.slots[static_cast<std::size_t>(s)].known(); });
}

void CompiledPlan::check_rule(std::size_t index, const CheckState& f) const {
  const Rule& rule = rules_[index];
  const std::string where = "shape_rules[" + std::to_string(index) + "] '" + rule.text + "'";
  bool holds = false;
  try {
    holds = expr::evaluate_bool(rule.expr.root, f.env());
  } catch (const expr::UnsetSlotError& e) {
    throw ValueError(message(where + " reads '" + slots_[static_cast<std::size_t>(e.slot())].name +
                             "', which this call does not determine"));
  } catch (const ValueError& e) {
    throw ValueError(message(where + ": " + e.what() + " (" + describe_reads(rule.expr, f) + ")"));
  }
  if (holds) return;
  const std::string seen = describe_reads(rule.expr, f);
  if (!rule.message.empty()) throw ValueError(message(rule.message + " (" + seen + ")"));
  throw ValueError(message(where + " is false (" + seen + ")"));
}

}  // namespace tileops::detail
