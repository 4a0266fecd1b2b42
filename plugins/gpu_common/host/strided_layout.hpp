// The layout two strided operands share, reduced to the fewest axes: extent-1 axes dropped
// and an axis merged into the next inner one wherever both operands step over it as one run.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "launchers.hpp"

namespace tileops::gpu {

struct PairLayout {
  int rank = 0;
  std::array<std::int64_t, kMaxStridedRank> shape{};
  std::array<std::int64_t, kMaxStridedRank> first{};   // strides of the first operand
  std::array<std::int64_t, kMaxStridedRank> second{};  // strides of the second operand
};

// Coalesces `shape` with the strides of two operands (in elements; all three of one rank).
// Returns false when more than kMaxStridedRank axes remain.
bool coalesce(std::span<const std::int64_t> shape, std::span<const std::int64_t> first,
              std::span<const std::int64_t> second, PairLayout& out);

}  // namespace tileops::gpu
