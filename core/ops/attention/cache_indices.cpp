#include "attention/cache_indices.hpp"

#include <algorithm>
#include <string>

#include "tileops/errors.hpp"

namespace tileops::attention {

void check_seqlens(std::string_view op, const Tensor& cache_seqlens, std::int64_t added, std::int64_t capacity,
                   std::string_view capacity_what) {
  const std::int32_t* lens = cache_seqlens.data<std::int32_t>();
  for (std::int64_t b = 0; b < cache_seqlens.numel(); ++b) {
    const std::int64_t s = lens[b];
    if (s >= 0 && s + added <= capacity) continue;
    std::string allowed = "[0, " + std::to_string(capacity - added) + "]";
    if (capacity - added < 0) allowed = "(none)";
    throw ValueError(std::string(op) + ": cache_seqlens[" + std::to_string(b) + "] = " + std::to_string(s) +
                     " is outside " + allowed + ": a sequence holds from 0 to " + std::string(capacity_what) +
                     " positions" + (added > 0 ? " after its " + std::to_string(added) + " new tokens" : ""));
  }
}

void check_block_table(std::string_view op, const Tensor& block_table, const Tensor& cache_seqlens,
                       std::int64_t block_size, std::int64_t num_blocks, Touched touched, std::int64_t added) {
  const std::int32_t* lens = cache_seqlens.data<std::int32_t>();
  const std::int32_t* table = block_table.data<std::int32_t>();
  const std::int64_t max_blocks = block_table.shape()[1];
  for (std::int64_t b = 0; b < cache_seqlens.numel(); ++b) {
    const std::int64_t first = touched == Touched::cached ? 0 : lens[b];
    const std::int64_t end = touched == Touched::cached ? lens[b] : lens[b] + added;
    if (first >= end) continue;
    for (std::int64_t page = first / block_size; page <= (end - 1) / block_size; ++page) {
      const std::int64_t entry = table[b * max_blocks + page];
      if (entry >= 0 && entry < num_blocks) continue;
      const std::int64_t lo = std::max(first, page * block_size), hi = std::min(end, (page + 1) * block_size);
      const std::string expected = num_blocks > 0 ? "expected 0 to " + std::to_string(num_blocks - 1) + " (NB = " +
                                                        std::to_string(num_blocks) + ")"
                                                  : "the cache has no pages (NB = 0)";
      throw ValueError(std::string(op) + ": block_table[" + std::to_string(b) + ", " + std::to_string(page) + "] = " +
                       std::to_string(entry) + " names no page: " + expected + " for the page holding positions " +
                       std::to_string(lo) + " to " + std::to_string(hi - 1) + " of sequence " + std::to_string(b));
    }
  }
}

}  // namespace tileops::attention
