#include "attention_cases.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tileops/ops/attention.hpp"
#include "tileops/target.hpp"
#include "tileops/testing.hpp"

namespace tileops::testing {

Tensor uniform(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (double& x : values) x = dist(rng);
  return Tensor::from_doubles(values, shape, dtype);
}

Tensor int32s(const std::vector<double>& values, const Shape& shape) {
  return Tensor::from_doubles(values, shape, DType::int32);
}

KvCaches make_kv_caches(const std::vector<int>& lens, std::int64_t smax, std::int64_t kv_heads, std::int64_t d,
                        std::int64_t block_size, DType dtype) {
  const auto batch = static_cast<std::int64_t>(lens.size());
  KvCaches c;
  c.k = uniform({batch, smax, kv_heads, d}, dtype, 11);
  c.v = uniform({batch, smax, kv_heads, d}, dtype, 12);
  c.lens = int32s(std::vector<double>(lens.begin(), lens.end()), {batch});
  const std::int64_t max_blocks = (smax + block_size - 1) / block_size;
  const std::int64_t pages = batch * max_blocks + 2;
  std::vector<int> order(static_cast<std::size_t>(pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  c.k_pages = Tensor::zeros({pages, block_size, kv_heads, d}, dtype);
  c.v_pages = Tensor::zeros({pages, block_size, kv_heads, d}, dtype);
  std::vector<double> table;
  const std::int64_t token = kv_heads * d * static_cast<std::int64_t>(dtype_size(dtype));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t i = 0; i < max_blocks; ++i) {
      const int page = order[static_cast<std::size_t>(b * max_blocks + i)];
      table.push_back(page);
      for (std::int64_t s = 0; s < block_size && i * block_size + s < smax; ++s) {
        const std::int64_t from = (b * smax + i * block_size + s) * token, to = (page * block_size + s) * token;
        for (const auto& [src, dst] : {std::pair{&c.k, &c.k_pages}, std::pair{&c.v, &c.v_pages}}) {
          std::copy_n(static_cast<const char*>(src->data_ptr()) + from, token, static_cast<char*>(dst->data_ptr()) + to);
        }
      }
    }
  }
  c.table = int32s(table, {batch, max_blocks});
  return c;
}

void check_prefill(const PrefillCase& p, const Device& device) {
  INFO("batch ", p.batch, " q_len ", p.q_len, " kv_len ", p.kv_len, " heads ", p.heads, "/", p.kv_heads, " d ",
       p.head_dim, " causal ", p.causal, " window ", p.window, " softcap ", p.softcap.value_or(0), " ",
       dtype_name(p.dtype), " on ", device.str());
  const Tensor q = uniform({p.batch, p.q_len, p.heads, p.head_dim}, p.dtype, 1);
  const Tensor k = uniform({p.batch, p.kv_len, p.kv_heads, p.head_dim}, p.dtype, 2);
  const Tensor v = uniform({p.batch, p.kv_len, p.kv_heads, p.head_dim}, p.dtype, 3);
  GroupedQueryAttentionFwdOp fast(p.causal, std::nullopt, p.window, p.softcap, true);
  GroupedQueryAttentionFwdOp reference(p.causal, std::nullopt, p.window, p.softcap, true, std::string(REFERENCE));
  const auto got = fast(q.to(device), k.to(device), v.to(device));
  const auto want = reference(q, k, v);
  REQUIRE(got.o.device() == device);
  for (const auto& [name, mine, theirs] : {std::tuple{"o", &got.o, &want.o}, std::tuple{"lse", &got.lse, &want.lse}}) {
    const Comparison c = compare(mine->to(Device::cpu()), *theirs);
    CHECK_MESSAGE(c.ok, name << ": max abs " << c.max_abs << ", max rel " << c.max_rel);
  }
}

}  // namespace tileops::testing
