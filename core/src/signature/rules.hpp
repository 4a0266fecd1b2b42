// Whether a refinement (`shape_rules`) can be checked against a check state yet.
#pragma once

#include "signature/compiled_plan.hpp"

namespace tileops::detail {

// True when every slot the rule reads is known in `f`.
bool rule_ready(const Rule& rule, const CheckState& f);

}  // namespace tileops::detail
