// The cpu plugin's attention kernels: the tiled online-softmax prefill and the (split) decode
// over contiguous and paged caches of cpu_kernels.hpp, and the cache appends.
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/attention.hpp"

namespace tileops::cpu {

class AttentionKernel final : public ops::GroupedQueryAttentionFwdOp::GqaAttention::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Result forward(const Tensor& q, const Tensor& k, const Tensor& v) override;
};

class DecodeKernel final : public ops::GroupedQueryAttentionDecodeFwdOp::GqaDecode::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, const Tensor& cache_seqlens) override;
};

class PagedDecodeKernel final
    : public ops::GroupedQueryAttentionPagedDecodeFwdOp::GqaPagedDecode::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages, const Tensor& block_table,
                 const Tensor& cache_seqlens) override;
};

class CacheAppendKernel final : public ops::KVCacheAppendFwdOp::KvCacheAppend::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& k_cache, const Tensor& v_cache, const Tensor& k_new, const Tensor& v_new,
               const Tensor& cache_seqlens) override;
};

class PagedCacheAppendKernel final
    : public ops::PagedKVCacheAppendFwdOp::PagedKvCacheAppend::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& k_pages, const Tensor& v_pages, const Tensor& k_new, const Tensor& v_new,
               const Tensor& block_table, const Tensor& cache_seqlens) override;
};

}  // namespace tileops::cpu
