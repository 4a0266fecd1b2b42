// The check of indices an op reads rows by (embedding ids, expert ids). It runs on host
// indices, before any kernel reads through them.
#pragma once

#include <cstdint>
#include <string_view>

#include "tileops/tensor.hpp"

namespace tileops {

// How an error names what the indices select among: "<op>: <input>[i, j] = v is outside
// <among>: expected 0 to count - 1 (<size>)", or "<among> is empty" in place of the expected
// range when count is 0.
struct IndexTarget {
  std::string_view input;  // "ids"
  std::string_view among;  // "the vocabulary"
  std::string_view size;   // "vocabulary size V = 10, the rows of weight"
};

// indices: contiguous int32 or int64 on the host. Throws ValueError naming the first index
// outside [0, count), its position in `indices` and `target`.
void check_indices(std::string_view op, const Tensor& indices, std::int64_t count, const IndexTarget& target);

}  // namespace tileops
