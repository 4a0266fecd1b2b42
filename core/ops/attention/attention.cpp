#include "tileops/ops/attention.hpp"

#include <cmath>

#include "attention/cache_indices.hpp"
#include "tileops/extend/ops/attention.hpp"

namespace tileops {
namespace {

double scale_or_default(const std::optional<double>& sm_scale, std::int64_t head_dim) {
  return sm_scale ? *sm_scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

// The call spec fields every attention interface shares, from the op's parameters.
template <class Call, class Op>
Call attention_call(const Op& op, const Tensor& q) {
  Call call;
  call.device = q.device();
  call.dtype = q.dtype();
  call.sm_scale = scale_or_default(op.sm_scale(), q.shape().back());
  call.window_left = op.window_size_left();
  call.softcap = op.softcap().value_or(0.0);
  return call;
}

}  // namespace

OpOutputs GroupedQueryAttentionFwdOp::forward(const CallArgs& args) {
  using Attention = ops::GroupedQueryAttentionFwdOp::GqaAttention;
  const Tensor q = args.inputs[0].contiguous();
  const Tensor k = args.inputs[1].contiguous();
  const Tensor v = args.inputs[2].contiguous();
  Attention::Call call = attention_call<Attention::Call>(*this, q);
  call.is_causal = is_causal();
  call.return_lse = return_lse();
  Attention::Result r = kernel_for<Attention>(call).forward(q, k, v);
  return outputs_of(std::move(r.o), std::move(r.lse));
}

OpOutputs GroupedQueryAttentionDecodeFwdOp::forward(const CallArgs& args) {
  using Decode = ops::GroupedQueryAttentionDecodeFwdOp::GqaDecode;
  const Tensor q = args.inputs[0].contiguous();
  const Tensor& k_cache = args.inputs[1];
  const Tensor seqlens = args.inputs[3].contiguous();
  if (seqlens.device().is_cpu()) {
    const std::int64_t smax = k_cache.shape()[1];
    attention::check_seqlens(name(), seqlens, 0, smax, "Smax = " + std::to_string(smax));
  }
  const Decode::Call call = attention_call<Decode::Call>(*this, q);
  return outputs_of(kernel_for<Decode>(call).forward(q, k_cache, args.inputs[2], seqlens));
}

OpOutputs GroupedQueryAttentionPagedDecodeFwdOp::forward(const CallArgs& args) {
  using PagedDecode = ops::GroupedQueryAttentionPagedDecodeFwdOp::GqaPagedDecode;
  const Tensor q = args.inputs[0].contiguous();
  const Tensor& k_pages = args.inputs[1];
  const Tensor table = args.inputs[3].contiguous();
  const Tensor seqlens = args.inputs[4].contiguous();
  if (seqlens.device().is_cpu() && table.device().is_cpu()) {
    const std::int64_t block_size = k_pages.shape()[1];
    const std::int64_t max_blocks = table.shape()[1];
    attention::check_seqlens(name(), seqlens, 0, max_blocks * block_size,
                             "MB * BS = " + std::to_string(max_blocks * block_size));
    attention::check_block_table(name(), table, seqlens, block_size, k_pages.shape()[0], attention::Touched::cached, 0);
  }
  const PagedDecode::Call call = attention_call<PagedDecode::Call>(*this, q);
  return outputs_of(kernel_for<PagedDecode>(call).forward(q, k_pages, args.inputs[2], table, seqlens));
}

OpOutputs KVCacheAppendFwdOp::forward(const CallArgs& args) {
  using Append = ops::KVCacheAppendFwdOp::KvCacheAppend;
  const Tensor& k_cache = args.inputs[0];
  const Tensor& v_cache = args.inputs[1];
  const Tensor k_new = args.inputs[2].contiguous();
  const Tensor v_new = args.inputs[3].contiguous();
  const Tensor seqlens = args.inputs[4].contiguous();
  if (seqlens.device().is_cpu()) {
    const std::int64_t smax = k_cache.shape()[1];
    attention::check_seqlens(name(), seqlens, k_new.shape()[1], smax, "Smax = " + std::to_string(smax));
  }
  Append::Call call;
  call.device = k_cache.device();
  call.dtype = k_cache.dtype();
  kernel_for<Append>(call).forward(k_cache, v_cache, k_new, v_new, seqlens);
  return outputs_of(k_cache, v_cache);
}

OpOutputs PagedKVCacheAppendFwdOp::forward(const CallArgs& args) {
  using PagedAppend = ops::PagedKVCacheAppendFwdOp::PagedKvCacheAppend;
  const Tensor& k_pages = args.inputs[0];
  const Tensor& v_pages = args.inputs[1];
  const Tensor k_new = args.inputs[2].contiguous();
  const Tensor v_new = args.inputs[3].contiguous();
  const Tensor table = args.inputs[4].contiguous();
  const Tensor seqlens = args.inputs[5].contiguous();
  if (seqlens.device().is_cpu() && table.device().is_cpu()) {
    const std::int64_t block_size = k_pages.shape()[1];
    const std::int64_t max_blocks = table.shape()[1];
    const std::int64_t added = k_new.shape()[1];
    attention::check_seqlens(name(), seqlens, added, max_blocks * block_size,
                             "MB * BS = " + std::to_string(max_blocks * block_size));
    attention::check_block_table(name(), table, seqlens, block_size, k_pages.shape()[0], attention::Touched::appended,
                                 added);
  }
  PagedAppend::Call call;
  call.device = k_pages.device();
  call.dtype = k_pages.dtype();
  kernel_for<PagedAppend>(call).forward(k_pages, v_pages, k_new, v_new, table, seqlens);
  return outputs_of(k_pages, v_pages);
}

}  // namespace tileops
