// Checking refinements (`shape_rules`) against a frame.
#pragma once

#include "signature/compiled_plan.hpp"

namespace tileops::detail {

// Evaluates rule `index`; when it does not hold throws ValueError "Op: <message> (names = values)"
// for a rule with a manifest message, else "Op: shape_rules[i] 'text' is false (names = values)";
// when evaluating it fails, names the rule and the reason.
void check_rule(const CompiledPlan& plan, std::size_t index, const Frame& f);

// True when every slot the rule reads is known in `f`.
bool rule_ready(const Rule& rule, const Frame& f);

}  // namespace tileops::detail
