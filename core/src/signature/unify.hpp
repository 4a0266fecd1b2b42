// Unification of actual tensors with their declarations (calls.md Table 1): solves forall
// indices from axis lengths and dtypes, and checks every other axis and dtype once the names
// it reads are known.
#pragma once

#include <span>
#include <utility>

#include "signature/compiled_plan.hpp"
#include "tileops/tensor.hpp"

namespace tileops::detail {

// Unifies each (tensor id, tensor) pair with its declaration, solving indices into `f` until no
// more can be solved; let entries are computed as their inputs become known. The frame's
// subjects must be selected. Throws TypeError for a dtype outside its index's set or different
// from what its declaration evaluates to, ValueError for a rank or axis that does not match,
// naming the tensor, the declaration, its evaluated form and where each index read came from.
// Throws ValueError when a declaration cannot be resolved (an index no tensor determines).
void unify_tensors(const CompiledPlan& plan, std::span<const std::pair<int, const Tensor*>> tensors, Frame& f);

// The term evaluated as far as the frame allows: "[4096, N]".
std::string describe_term(const CompiledPlan& plan, const ShapeTerm& term, const Frame& f);

}  // namespace tileops::detail
