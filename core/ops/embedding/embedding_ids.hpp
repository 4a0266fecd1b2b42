// The check of the ids an embedding lookup reads rows by. It runs on host ids, before any
// kernel reads through them.
#pragma once

#include <cstdint>
#include <string_view>

#include "tileops/tensor.hpp"

namespace tileops::embedding {

// ids: contiguous int32 or int64 on the host. Throws ValueError naming the first id outside
// [0, vocab), its position in ids and the vocabulary size.
void check_ids(std::string_view op, const Tensor& ids, std::int64_t vocab);

}  // namespace tileops::embedding
