#include "kv_caches.hpp"

#include <algorithm>
#include <numeric>
#include <random>

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

}  // namespace tileops::testing
