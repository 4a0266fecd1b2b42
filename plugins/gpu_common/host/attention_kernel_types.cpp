// The attention ops and the KV cache appends on the GPU.
#include "attention_launchers.hpp"
#include "call_support.hpp"
#include "kernel_types.hpp"

namespace tileops::gpu {
namespace {

int arch_of(const CallSpec& call) { return runtime()->facts(device_index_of(call)).arch; }

// A workspace of `bytes` on the tensor's device, from its stream-ordered pool (undefined for 0).
Tensor workspace(std::size_t bytes, const Tensor& like) {
  return bytes == 0 ? Tensor() : Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::uint8, like.device());
}

void* pointer_of(Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

}  // namespace

AttentionKernel::AttentionKernel(const Call& call) : Impl(call), arch_(arch_of(call)), warp_size_(warp_size_of(call)) {}

PrefillLaunch prepare_prefill(const GqaAttentionCall& call, const Tensor& q, const Tensor& k, const Tensor& v,
                              int warp_size) {
  const Shape& s = q.shape();
  PrefillLaunch p{{Tensor::empty(s, q.dtype(), q.device()), Tensor()}, {}};
  if (call.return_lse) p.result.lse = Tensor::empty({s[0], s[2], s[1]}, DType::float32, q.device());
  p.args = {q.data_ptr(), k.data_ptr(), v.data_ptr(), p.result.o.data_ptr(),
            p.result.lse.defined() ? p.result.lse.data<float>() : nullptr, s[0], s[1], k.shape()[1], s[2],
            k.shape()[2], s[3], static_cast<float>(call.sm_scale), static_cast<float>(call.softcap),
            call.window_left, call.is_causal, call.dtype, warp_size};
  return p;
}

AttentionKernel::Result AttentionKernel::forward(const Tensor& q, const Tensor& k, const Tensor& v) {
  DeviceGuard on(q.device().index());
  PrefillLaunch p = prepare_prefill(call_, q, k, v, warp_size_);
  launch_attention(p.args, arch_, stream_of(q));
  return std::move(p.result);
}

DecodeKernel::DecodeKernel(const Call& call)
    : Impl(call),
      sm_count_(sm_count_of(call)),
      arch_(arch_of(call)),
      warp_size_(warp_size_of(call)),
      faults_(faults_of(call)) {}

Tensor DecodeKernel::forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                             const Tensor& cache_seqlens) {
  runtime()->raise_pending_fault(q.device().index());
  DeviceGuard on(q.device().index());
  Tensor o = Tensor::empty(q.shape(), q.dtype(), q.device());
  const Shape& cs = k_cache.shape();
  const DecodeArgs args{q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), o.data_ptr(),
                        cache_seqlens.data<std::int32_t>(), nullptr, q.shape()[0], q.shape()[1], cs[2], cs[3], cs[1],
                        0, 0, 0, static_cast<float>(call_.sm_scale), static_cast<float>(call_.softcap),
                        call_.window_left, call_.dtype, faults_, warp_size_};
  const int splits = decode_splits(args, sm_count_, arch_);
  Tensor work = workspace(decode_workspace_bytes(args, splits), q);
  launch_decode(args, splits, pointer_of(work), arch_, stream_of(q));
  return o;
}

PagedDecodeKernel::PagedDecodeKernel(const Call& call)
    : Impl(call),
      sm_count_(sm_count_of(call)),
      arch_(arch_of(call)),
      warp_size_(warp_size_of(call)),
      faults_(faults_of(call)) {}

Tensor PagedDecodeKernel::forward(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages,
                                  const Tensor& block_table, const Tensor& cache_seqlens) {
  runtime()->raise_pending_fault(q.device().index());
  DeviceGuard on(q.device().index());
  Tensor o = Tensor::empty(q.shape(), q.dtype(), q.device());
  const Shape& ps = k_pages.shape();
  const std::int64_t max_blocks = block_table.shape()[1];
  const DecodeArgs args{q.data_ptr(), k_pages.data_ptr(), v_pages.data_ptr(), o.data_ptr(),
                        cache_seqlens.data<std::int32_t>(), block_table.data<std::int32_t>(), q.shape()[0],
                        q.shape()[1], ps[2], ps[3], max_blocks * ps[1], max_blocks, ps[1], ps[0],
                        static_cast<float>(call_.sm_scale), static_cast<float>(call_.softcap), call_.window_left,
                        call_.dtype, faults_, warp_size_};
  const int splits = decode_splits(args, sm_count_, arch_);
  Tensor work = workspace(decode_workspace_bytes(args, splits), q);
  launch_decode(args, splits, pointer_of(work), arch_, stream_of(q));
  return o;
}

CacheAppendKernel::CacheAppendKernel(const Call& call) : Impl(call), faults_(faults_of(call)) {}

void CacheAppendKernel::forward(const Tensor& k_cache, const Tensor& v_cache, const Tensor& k_new, const Tensor& v_new,
                                const Tensor& cache_seqlens) {
  runtime()->raise_pending_fault(k_cache.device().index());
  DeviceGuard on(k_cache.device().index());
  const Shape& cs = k_cache.shape();
  const CacheAppendArgs args{k_cache.data_ptr(), v_cache.data_ptr(), k_new.data_ptr(), v_new.data_ptr(),
                             cache_seqlens.data<std::int32_t>(), nullptr, cs[0], k_new.shape()[1], cs[2], cs[3], cs[1],
                             0, 0, 0, call_.dtype, faults_};
  launch_cache_append(args, nullptr, stream_of(k_cache));
}

PagedCacheAppendKernel::PagedCacheAppendKernel(const Call& call) : Impl(call), faults_(faults_of(call)) {}

void PagedCacheAppendKernel::forward(const Tensor& k_pages, const Tensor& v_pages, const Tensor& k_new,
                                     const Tensor& v_new, const Tensor& block_table, const Tensor& cache_seqlens) {
  runtime()->raise_pending_fault(k_pages.device().index());
  DeviceGuard on(k_pages.device().index());
  const Shape& ps = k_pages.shape();
  const std::int64_t max_blocks = block_table.shape()[1];
  const CacheAppendArgs args{k_pages.data_ptr(), v_pages.data_ptr(), k_new.data_ptr(), v_new.data_ptr(),
                             cache_seqlens.data<std::int32_t>(), block_table.data<std::int32_t>(), k_new.shape()[0],
                             k_new.shape()[1], ps[2], ps[3], max_blocks * ps[1], max_blocks, ps[1], ps[0],
                             call_.dtype, faults_};
  Tensor work = workspace(cache_append_workspace_bytes(args), k_pages);
  launch_cache_append(args, pointer_of(work), stream_of(k_pages));
}

}  // namespace tileops::gpu
