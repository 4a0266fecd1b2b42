#include "attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/dtype_dispatch.hpp"

namespace tileops::ref {
namespace {

struct Scores {
  double scale;
  double softcap;  // 0: none
};

// Attention of one query row (d values, already widened) over the keys [lo, hi) that key(j)
// and value(j) point to, in double: writes the weighted sum of the values into o (d values)
// and returns the log-sum-exp of the scores, -inf (and o = 0) when the range is empty.
template <class T, class KeyAt, class ValueAt>
double attend(const std::vector<double>& q, std::int64_t lo, std::int64_t hi, const Scores& sc, KeyAt key,
              ValueAt value, std::vector<double>& scores, double* o) {
  const auto d = static_cast<std::int64_t>(q.size());
  std::fill(o, o + d, 0.0);
  if (hi <= lo) return -std::numeric_limits<double>::infinity();
  scores.assign(static_cast<std::size_t>(hi - lo), 0.0);
  double max = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = lo; j < hi; ++j) {
    const T* k = key(j);
    double s = 0;
    for (std::int64_t c = 0; c < d; ++c) s += q[c] * load(k[c]);
    s *= sc.scale;
    if (sc.softcap > 0) s = sc.softcap * std::tanh(s / sc.softcap);
    scores[j - lo] = s;
    max = std::max(max, s);
  }
  double sum = 0;
  for (std::int64_t j = lo; j < hi; ++j) {
    const double p = std::exp(scores[j - lo] - max);
    sum += p;
    const T* v = value(j);
    for (std::int64_t c = 0; c < d; ++c) o[c] += p * load(v[c]);
  }
  for (std::int64_t c = 0; c < d; ++c) o[c] /= sum;
  return max + std::log(sum);
}

template <class T>
std::vector<double> widened(const T* p, std::int64_t n) {
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[i] = load(p[i]);
  return out;
}

template <class T>
void store_row(const std::vector<double>& o, T* out) {
  for (std::size_t c = 0; c < o.size(); ++c) out[c] = store<T>(o[c]);
}

// The first key a row whose diagonal is at key position `diag` sees under a left window.
std::int64_t window_start(std::int64_t diag, std::int64_t window_left) {
  return window_left >= 0 ? std::max<std::int64_t>(0, diag - window_left) : 0;
}

}  // namespace

GroupedQueryAttentionFwdOp::GqaAttention::Result GroupedQueryAttentionFwdOp::GqaAttention::forward(const Tensor& q,
                                                                                                   const Tensor& k,
                                                                                                   const Tensor& v) {
  const std::int64_t batch = q.shape()[0], sq = q.shape()[1], heads = q.shape()[2], d = q.shape()[3];
  const std::int64_t skv = k.shape()[1], kv_heads = k.shape()[2];
  const std::int64_t group = heads / kv_heads;
  Result r{Tensor::empty(q.shape(), q.dtype(), q.device()), Tensor()};
  if (call_.return_lse) r.lse = Tensor::empty({batch, heads, sq}, DType::float32, q.device());
  const Scores sc{call_.sm_scale, call_.softcap};
  visit_dtype(q.dtype(), [&]<class T>(TypeTag<T>) {
    const T* qp = q.data<T>();
    const T* kp = k.data<T>();
    const T* vp = v.data<T>();
    T* op = r.o.data<T>();
    float* lse = call_.return_lse ? r.lse.data<float>() : nullptr;
    std::vector<double> o(static_cast<std::size_t>(d)), scores;
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t i = 0; i < sq; ++i) {
        const std::int64_t diag = i + skv - sq;
        const std::int64_t lo = window_start(diag, call_.window_left);
        const std::int64_t hi = call_.is_causal ? std::clamp<std::int64_t>(diag + 1, 0, skv) : skv;
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::int64_t row = (b * sq + i) * heads + h;
          const std::int64_t kvh = h / group;
          const auto at = [&](const T* base) { return [=](std::int64_t j) { return base + ((b * skv + j) * kv_heads + kvh) * d; }; };
          const double l = attend<T>(widened(qp + row * d, d), lo, hi, sc, at(kp), at(vp), scores, o.data());
          store_row(o, op + row * d);
          if (lse != nullptr) lse[(b * heads + h) * sq + i] = static_cast<float>(l);
        }
      }
    }
  });
  return r;
}

namespace {

// Decode over a cache whose position j of sequence b is token slot slot(b, j) of k and v viewed
// as [slots, Hkv, D].
template <class SlotOf>
Tensor decode_over(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cache_seqlens,
                   std::int64_t kv_heads, const Scores& sc, std::int64_t window_left, SlotOf slot) {
  const std::int64_t batch = q.shape()[0], heads = q.shape()[1], d = q.shape()[2];
  const std::int64_t group = heads / kv_heads;
  const std::int32_t* lens = cache_seqlens.data<std::int32_t>();
  Tensor out = Tensor::empty(q.shape(), q.dtype(), q.device());
  visit_dtype(q.dtype(), [&]<class T>(TypeTag<T>) {
    std::vector<double> o(static_cast<std::size_t>(d)), scores;
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t len = lens[b];
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t kvh = h / group;
        const auto at = [&](const Tensor& cache) {
          const T* base = cache.data<T>();
          return [=](std::int64_t j) { return base + (slot(b, j) * kv_heads + kvh) * d; };
        };
        attend<T>(widened(q.data<T>() + (b * heads + h) * d, d), window_start(len - 1, window_left), len, sc, at(k),
                  at(v), scores, o.data());
        store_row(o, out.data<T>() + (b * heads + h) * d);
      }
    }
  });
  return out;
}

}  // namespace

Tensor GroupedQueryAttentionDecodeFwdOp::GqaDecode::forward(const Tensor& q, const Tensor& k_cache,
                                                            const Tensor& v_cache, const Tensor& cache_seqlens) {
  const std::int64_t smax = k_cache.shape()[1];
  return decode_over(q, k_cache, v_cache, cache_seqlens, k_cache.shape()[2], Scores{call_.sm_scale, call_.softcap},
                     call_.window_left, [smax](std::int64_t b, std::int64_t j) { return b * smax + j; });
}

Tensor GroupedQueryAttentionPagedDecodeFwdOp::GqaPagedDecode::forward(const Tensor& q, const Tensor& k_pages,
                                                                      const Tensor& v_pages, const Tensor& block_table,
                                                                      const Tensor& cache_seqlens) {
  const std::int64_t block_size = k_pages.shape()[1];
  const std::int64_t max_blocks = block_table.shape()[1];
  const std::int32_t* table = block_table.data<std::int32_t>();
  return decode_over(q, k_pages, v_pages, cache_seqlens, k_pages.shape()[2], Scores{call_.sm_scale, call_.softcap},
                     call_.window_left, [=](std::int64_t b, std::int64_t j) {
                       return table[b * max_blocks + j / block_size] * block_size + j % block_size;
                     });
}

void KVCacheAppendFwdOp::KvCacheAppend::forward(const Tensor& k_cache, const Tensor& v_cache, const Tensor& k_new,
                                                const Tensor& v_new, const Tensor& cache_seqlens) {
  const std::int64_t batch = k_new.shape()[0], added = k_new.shape()[1];
  const std::int64_t smax = k_cache.shape()[1];
  const std::int64_t token_bytes = k_new.shape()[2] * k_new.shape()[3] * static_cast<std::int64_t>(dtype_size(k_new.dtype()));
  const std::int32_t* lens = cache_seqlens.data<std::int32_t>();
  for (const auto& [cache, fresh] : {std::pair{&k_cache, &k_new}, std::pair{&v_cache, &v_new}}) {
    auto* dst = static_cast<std::byte*>(cache->data_ptr());
    const auto* src = static_cast<const std::byte*>(fresh->data_ptr());
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t t = 0; t < added; ++t) {
        std::memcpy(dst + (b * smax + lens[b] + t) * token_bytes, src + (b * added + t) * token_bytes,
                    static_cast<std::size_t>(token_bytes));
      }
    }
  }
}

void PagedKVCacheAppendFwdOp::PagedKvCacheAppend::forward(const Tensor& k_pages, const Tensor& v_pages,
                                                          const Tensor& k_new, const Tensor& v_new,
                                                          const Tensor& block_table, const Tensor& cache_seqlens) {
  const std::int64_t batch = k_new.shape()[0], added = k_new.shape()[1];
  const std::int64_t block_size = k_pages.shape()[1];
  const std::int64_t max_blocks = block_table.shape()[1];
  const std::int64_t token_bytes = k_new.shape()[2] * k_new.shape()[3] * static_cast<std::int64_t>(dtype_size(k_new.dtype()));
  const std::int32_t* lens = cache_seqlens.data<std::int32_t>();
  const std::int32_t* table = block_table.data<std::int32_t>();
  for (const auto& [pages, fresh] : {std::pair{&k_pages, &k_new}, std::pair{&v_pages, &v_new}}) {
    auto* dst = static_cast<std::byte*>(pages->data_ptr());
    const auto* src = static_cast<const std::byte*>(fresh->data_ptr());
    for (std::int64_t b = 0; b < batch; ++b) {
      for (std::int64_t t = 0; t < added; ++t) {
        const std::int64_t p = lens[b] + t;
        const std::int64_t slot = table[b * max_blocks + p / block_size] * block_size + p % block_size;
        std::memcpy(dst + slot * token_bytes, src + (b * added + t) * token_bytes, static_cast<std::size_t>(token_bytes));
      }
    }
  }
}

}  // namespace tileops::ref
