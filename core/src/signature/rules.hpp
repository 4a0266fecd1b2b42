// Checking refinements (`shape_rules`) against a frame.
#pragma once

#include "signature/compiled_plan.hpp"

namespace tileops::detail {

// Evaluates rule `index`; throws ValueError "Op: shape_rules[i] 'text' is false (names = values)"
// when it does not hold, or naming the reason when evaluating it fails.
void check_rule(const CompiledPlan& plan, std::size_t index, const Frame& f);

// True when every slot the rule reads is known in `f`.
bool rule_ready(const Rule& rule, const Frame& f);

}  // namespace tileops::detail
