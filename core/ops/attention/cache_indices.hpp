// The checks of the index tensors the decode and append ops read from memory (sequence lengths
// and block tables). They run on host tensors, before any kernel reads through the indices.
#pragma once

#include <cstdint>
#include <string_view>

#include "tileops/tensor.hpp"

namespace tileops::attention {

// cache_seqlens: int32 [B] on the host. Throws ValueError unless every entry s satisfies
// 0 <= s and s + added <= capacity (`capacity_what` names the capacity, e.g. "Smax = 4096").
void check_seqlens(std::string_view op, const Tensor& cache_seqlens, std::int64_t added, std::int64_t capacity,
                   std::string_view capacity_what);

// The positions of each sequence a call touches: its cached ones (a decode reads them) or the
// `added` after them (an append writes them).
enum class Touched { cached, appended };

// block_table: int32 [B, MB] on the host; cache_seqlens already checked to fit in MB pages of
// block_size. Throws ValueError unless, for every sequence b, the entries of the pages holding
// the positions the call touches name one of `num_blocks` pages.
void check_block_table(std::string_view op, const Tensor& block_table, const Tensor& cache_seqlens,
                       std::int64_t block_size, std::int64_t num_blocks, Touched touched, std::int64_t added);

}  // namespace tileops::attention
