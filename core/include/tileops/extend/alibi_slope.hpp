// The ALiBi slopes, shared by every kernel of AlibiFwdOp's interface.
#pragma once

#include <cstdint>

#include "tileops/export.hpp"

namespace tileops {

// The ALiBi slope of head `head` of `num_heads`: 2^(-8 (h+1) / n) for the largest power of two
// n <= num_heads, then the odd-indexed slopes of 2n for the remaining heads.
TILEOPS_API double alibi_slope(std::int64_t head, std::int64_t num_heads);

}  // namespace tileops
