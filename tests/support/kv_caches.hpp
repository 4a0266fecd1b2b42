// Inputs of the attention tests: uniform random tensors, int32 index tensors, and a KV cache
// held both contiguously and in shuffled pages.
#pragma once

#include <cstdint>
#include <vector>

#include "tileops/tensor.hpp"

namespace tileops::testing {

// Uniform values in [-1, 1), rounded to dtype, on the host.
Tensor uniform(const Shape& shape, DType dtype, unsigned seed);

// An int32 tensor of `values` on the host.
Tensor int32s(const std::vector<double>& values, const Shape& shape);

// A KV cache of `lens` sequences, contiguous ([B, Smax, Hkv, D]) and the same keys and values in
// shuffled pages of `block_size` ([NB, BS, Hkv, D] with a block table), with two spare pages.
struct KvCaches {
  Tensor k, v, lens, k_pages, v_pages, table;
};
KvCaches make_kv_caches(const std::vector<int>& lens, std::int64_t smax, std::int64_t kv_heads, std::int64_t d,
                        std::int64_t block_size, DType dtype);

}  // namespace tileops::testing
