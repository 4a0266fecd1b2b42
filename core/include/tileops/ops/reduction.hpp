// SumFwdOp, ProdFwdOp and MeanFwdOp: reductions over `dim` (an axis, a list of axes, or every
// axis); dtype is the accumulation and output dtype (None: int64 for integer inputs, else the
// input's). MeanFwdOp takes floating inputs only and gives NaN over an empty axis. The classes
// are generated from manifests/reduction.yaml; core/ops/reduction holds their forwards.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "tileops/op.hpp"
#include "tileops/ops/gen/reduction.hpp"

namespace tileops {

// `dim`: nullopt reduces every axis; an int or a list names the axes (negative from the end).
using ReduceDims = std::optional<std::variant<std::int64_t, std::vector<std::int64_t>>>;

}  // namespace tileops
