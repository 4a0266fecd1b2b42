#include "attention_kernels.hpp"

#include "cpu_kernels.hpp"

namespace tileops::cpu {
namespace {

// The decode arguments of one call over pages [num_pages, block_size, Hkv, D] (a contiguous
// cache: one page per sequence and no block table).
template <class Call>
DecodeArgs decode_args(const Call& call, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& seqlens) {
  DecodeArgs a;
  a.batch = q.shape()[0];
  a.heads = q.shape()[1];
  a.head_dim = q.shape()[2];
  a.num_pages = k.shape()[0];
  a.block_size = k.shape()[1];
  a.kv_heads = k.shape()[2];
  a.window_left = call.window_left;
  a.scale = call.sm_scale;
  a.softcap = call.softcap;
  a.q = q.data_ptr();
  a.k = k.data_ptr();
  a.v = v.data_ptr();
  a.seqlens = seqlens.data<std::int32_t>();
  return a;
}

CacheAppendArgs append_args(const Tensor& k_pages, const Tensor& v_pages, const Tensor& k_new, const Tensor& v_new,
                            const Tensor& seqlens) {
  CacheAppendArgs a;
  a.batch = k_new.shape()[0];
  a.added = k_new.shape()[1];
  a.kv_heads = k_new.shape()[2];
  a.head_dim = k_new.shape()[3];
  a.num_pages = k_pages.shape()[0];
  a.block_size = k_pages.shape()[1];
  a.k_pages = k_pages.data_ptr();
  a.v_pages = v_pages.data_ptr();
  a.k_new = k_new.data_ptr();
  a.v_new = v_new.data_ptr();
  a.seqlens = seqlens.data<std::int32_t>();
  return a;
}

}  // namespace

AttentionKernel::Result AttentionKernel::forward(const Tensor& q, const Tensor& k, const Tensor& v) {
  Result r{Tensor::empty(q.shape(), q.dtype(), q.device()), Tensor()};
  AttentionArgs a;
  a.batch = q.shape()[0];
  a.q_len = q.shape()[1];
  a.heads = q.shape()[2];
  a.head_dim = q.shape()[3];
  a.kv_len = k.shape()[1];
  a.kv_heads = k.shape()[2];
  a.causal = call_.is_causal;
  a.window_left = call_.window_left;
  a.scale = call_.sm_scale;
  a.softcap = call_.softcap;
  a.q = q.data_ptr();
  a.k = k.data_ptr();
  a.v = v.data_ptr();
  a.o = r.o.data_ptr();
  if (call_.return_lse) {
    r.lse = Tensor::empty({a.batch, a.heads, a.q_len}, DType::float32, q.device());
    a.lse = r.lse.data<float>();
  }
  attention(call_.dtype, a);
  return r;
}

Tensor DecodeKernel::forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                             const Tensor& cache_seqlens) {
  Tensor o = Tensor::empty(q.shape(), q.dtype(), q.device());
  DecodeArgs a = decode_args(call_, q, k_cache, v_cache, cache_seqlens);
  a.o = o.data_ptr();
  attention_decode(call_.dtype, a);
  return o;
}

Tensor PagedDecodeKernel::forward(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages,
                                  const Tensor& block_table, const Tensor& cache_seqlens) {
  Tensor o = Tensor::empty(q.shape(), q.dtype(), q.device());
  DecodeArgs a = decode_args(call_, q, k_pages, v_pages, cache_seqlens);
  a.o = o.data_ptr();
  a.block_table = block_table.data<std::int32_t>();
  a.max_blocks = block_table.shape()[1];
  attention_decode(call_.dtype, a);
  return o;
}

void CacheAppendKernel::forward(const Tensor& k_cache, const Tensor& v_cache, const Tensor& k_new,
                                const Tensor& v_new, const Tensor& cache_seqlens) {
  kv_cache_append(call_.dtype, append_args(k_cache, v_cache, k_new, v_new, cache_seqlens));
}

void PagedCacheAppendKernel::forward(const Tensor& k_pages, const Tensor& v_pages, const Tensor& k_new,
                                     const Tensor& v_new, const Tensor& block_table, const Tensor& cache_seqlens) {
  CacheAppendArgs a = append_args(k_pages, v_pages, k_new, v_new, cache_seqlens);
  a.block_table = block_table.data<std::int32_t>();
  a.max_blocks = block_table.shape()[1];
  kv_cache_append(call_.dtype, a);
}

}  // namespace tileops::cpu
