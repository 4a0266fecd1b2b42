// What the attention tests share: uniform random tensors, int32 index tensors, a KV cache held
// both contiguously and in shuffled pages, and the check of a prefill case on a device against
// the reference kernels on the host.
#pragma once

#include <cstdint>
#include <optional>
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

struct PrefillCase {
  std::int64_t batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal = true;
  std::int64_t window = -1;
  std::optional<double> softcap = std::nullopt;
  DType dtype = DType::bfloat16;
};

// GroupedQueryAttentionFwdOp as it runs by default on copies of the inputs on `device`, against
// the reference target on the host: o and lse (doctest checks, the case in their context).
void check_prefill(const PrefillCase& p, const Device& device);

}  // namespace tileops::testing
