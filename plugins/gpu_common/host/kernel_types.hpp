// The GPU implementations of the op set's kernel interfaces, shared by the cuda and rocm
// plugins (GpuKernel: devices {kDeviceType}, supported_archs kKernelArchs). Each serves every call of its
// interface that its refusal accepts, whatever the strides of the op's own views (the ops pass
// contiguous tensors; odd offsets take the kernels' scalar paths), and launches on the calling
// thread's current stream of the call's device, allocating its outputs (and any workspace)
// from that device's stream-ordered pool. Nothing is compiled, queried from the device or
// synchronised on a call. On cuda, kKernelArchs is empty ("every arch"): the build embeds machine
// code for the common GPUs and PTX that the driver compiles for any other (TileopsCudaArchs.cmake).
#pragma once

#include "attention_launchers.hpp"
#include "fault_record.hpp"
#include "launchers.hpp"
#include "tileops/extend/ops/attention.hpp"
#include "tileops/extend/ops/elementwise.hpp"
#include "tileops/extend/ops/embedding.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/extend/ops/moe.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/ops/pool.hpp"
#include "tileops/extend/ops/reduction.hpp"
#include "tileops/extend/ops/rope.hpp"
#include "tileops/extend/ops/softmax.hpp"
#include "vendor.hpp"

namespace tileops::gpu {

// The dispatch declarations every GPU kernel of this plugin shares.
struct GpuKernel : Kernel {
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
};

// A GPU kernel computing float32, float16 and bfloat16 (in float) only.
using GpuFloatKernel = FloatOnly<GpuKernel>;

class RMSNormKernel final : public ops::RMSNormFwdOp::RmsNorm::Impl<GpuFloatKernel> {
 public:
  explicit RMSNormKernel(const Call& call);
  Tensor forward(const Tensor& x, const Tensor& weight) override;

 private:
  std::int64_t resident_blocks_;  // of its row kernel on the call's device
};

class FusedAddRMSNormKernel final : public ops::FusedAddRMSNormFwdOp::FusedAddRmsNorm::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& residual, const Tensor& weight) override;
};

class LayerNormKernel final : public ops::LayerNormFwdOp::LayerNorm::Impl<GpuFloatKernel> {
 public:
  explicit LayerNormKernel(const Call& call);
  Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) override;

 private:
  std::int64_t resident_blocks_;  // of its row kernel on the call's device
};

// Along the last axis (inner == 1) and along any inner axis.
class SoftmaxKernel final : public ops::SoftmaxFwdOp::Softmax::Impl<GpuFloatKernel> {
 public:
  explicit SoftmaxKernel(const Call& call);
  Tensor forward(const Tensor& x) override;

 private:
  std::int64_t resident_blocks_;  // of its row kernel on the call's device
};

class RopeKernel final : public ops::RopeFwdOp::Rope::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& factors) override;
};

class RopeInterleavedKernel final : public ops::RopeInterleavedFwdOp::Rope::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& factors) override;
};

class LongRopeKernel final : public ops::LongRoPEFwdOp::Rope::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& short_factor,
                 const Tensor& long_factor) override;
};

class SiluAndMulKernel final : public ops::SiluAndMulFwdOp::SiluAndMul::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x) override;
};

class GeluAndMulKernel final : public ops::GeluAndMulFwdOp::GeluAndMul::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x) override;
};

// Every broadcast kind, for float32, float16, bfloat16, int32 and int64. A general broadcast
// whose operands keep more than kMaxStridedRank (25) axes once coalesced raises ValueError.
class AddKernel final : public ops::AddFwdOp::Add::Impl<GpuKernel> {
 public:
  using Impl::Impl;
  static std::optional<std::string> refusal(const Call& call);
  void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) override;
};

class ReluKernel final : public ops::ReluFwdOp::Relu::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& out) override;
};

class GeluKernel final : public ops::GeluFwdOp::Gelu::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& out) override;
};

// Holds the heads' slopes in device memory, uploaded once when the entry is built.
class AlibiKernel final : public ops::AlibiFwdOp::Alibi::Impl<GpuFloatKernel> {
 public:
  explicit AlibiKernel(const Call& call);
  Tensor forward() override;

 private:
  Tensor slopes_;
};

enum class Reduction { sum, prod, mean };

// Sum and product for every input and output dtype of the manifest (float16, bfloat16,
// float32, float64, int32, int64), accumulated as the interface says; mean for the floating ones.
template <Reduction kKind, class Interface>
class ReduceKernel final : public Interface::template Impl<GpuKernel> {
 public:
  static std::optional<std::string> refusal(const typename Interface::Call& call);
  explicit ReduceKernel(const typename Interface::Call& call);
  void forward(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce, std::int64_t inner) override;

 private:
  int sm_count_;
};
using SumKernel = ReduceKernel<Reduction::sum, ops::SumFwdOp::Sum>;
using ProdKernel = ReduceKernel<Reduction::prod, ops::ProdFwdOp::Prod>;
using MeanKernel = ReduceKernel<Reduction::mean, ops::MeanFwdOp::Mean>;

// GEMM of at most kMaxDotRows (8) rows of a, not transposed, against b stored [n, k]
// (trans_b: linear-layer weights) in float32, float16 or bfloat16, reading b once: the decode
// GEMM of a vendor without a library GEMM (hip), preferred there over the tiled GEMM. On CUDA
// cuBLASLt is preferred over it, as it is as fast or faster at most decode shapes measured and
// much faster from 4 rows of a on (bench/results/gpu_block_h200_2026-12-01.md and
// gpu_h100_2026-12-05_wave.md), so there it serves what cuBLASLt refuses, and the GPU tests run
// it directly: the source the hip plugin runs is checked on real hardware.
class DotRowsGemmKernel final : public ops::GemmFwdOp::Gemm::Impl<GpuKernel> {
 public:
#if defined(TILEOPS_GPU_HIP)
  static constexpr KeyList preferred_over{"hip_tiled_gemm"};
#else
  static constexpr KeyList preferred_over{"cuda_tiled_gemm"};
#endif
  static std::optional<std::string> refusal(const Call& call);
  explicit DotRowsGemmKernel(const Call& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  int sm_count_;
  int warp_size_;
};

// GEMM for every shape and transposition in float32, float16 or bfloat16 (tiled_gemm.cu:
// matrix cores on gfx908, gfx90a and gfx940, FMA elsewhere): the hip plugin's GEMM for what
// the dot-rows kernel refuses. On CUDA cuBLASLt is preferred over it for every GEMM; it is
// registered there too so that the GPU tests and benches build and call it directly on real
// hardware. Refuses other dtypes and extents whose offsets would overflow its index math
// (tiled_gemm_extent_refusal).
class TiledGemmKernel final : public ops::GemmFwdOp::Gemm::Impl<GpuKernel> {
 public:
  static std::optional<std::string> refusal(const Call& call);
  explicit TiledGemmKernel(const Call& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  int sm_count_;
};

class BatchNormTrainKernel final : public ops::BatchNormFwdOp::BatchNormFwdTrain::Impl<GpuFloatKernel> {
 public:
  explicit BatchNormTrainKernel(const Call& call);
  Result forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;

 private:
  int sm_count_;
  BatchNormSingleLaunch single_launch_;  // on the call's device
};

class BatchNormInferKernel final : public ops::BatchNormFwdOp::BatchNormFwdInfer::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;
};

using GqaAttentionCall = ops::GroupedQueryAttentionFwdOp::GqaAttention::Call;
using GqaAttentionResult = ops::GroupedQueryAttentionFwdOp::GqaAttention::Result;

// A prefill call's new outputs (on q's device, from its stream-ordered pool) and the launch
// arguments that fill them.
struct PrefillLaunch {
  GqaAttentionResult result;
  AttentionArgs args;
};
// warp_size: the device's (warp_size_of).
PrefillLaunch prepare_prefill(const GqaAttentionCall& call, const Tensor& q, const Tensor& k, const Tensor& v,
                              int warp_size);

// Dense prefill: the tensor-core kernel on CUDA sm_80 and later for float16 and bfloat16 at head
// dims 64 and 128, the portable kernel otherwise (attention_launchers.hpp).
class AttentionKernel final : public ops::GroupedQueryAttentionFwdOp::GqaAttention::Impl<GpuFloatKernel> {
 public:
  explicit AttentionKernel(const Call& call);
  Result forward(const Tensor& q, const Tensor& k, const Tensor& v) override;

 private:
  int arch_;
  int warp_size_;
};

// The kernels below read lengths and block-table entries from device memory: they check each
// before reading through it and record what is out of range in the device's fault record,
// which the next of these calls on the device (or a synchronisation, or a copy to the host)
// raises as ValueError before it launches anything (GpuRuntime::raise_pending_fault).
class DecodeKernel final : public ops::GroupedQueryAttentionDecodeFwdOp::GqaDecode::Impl<GpuFloatKernel> {
 public:
  explicit DecodeKernel(const Call& call);
  Tensor forward(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, const Tensor& cache_seqlens) override;

 private:
  int sm_count_;
  int arch_;
  int warp_size_;
  FaultRecord* faults_;
};

class PagedDecodeKernel final
    : public ops::GroupedQueryAttentionPagedDecodeFwdOp::GqaPagedDecode::Impl<GpuFloatKernel> {
 public:
  explicit PagedDecodeKernel(const Call& call);
  Tensor forward(const Tensor& q, const Tensor& k_pages, const Tensor& v_pages, const Tensor& block_table,
                 const Tensor& cache_seqlens) override;

 private:
  int sm_count_;
  int arch_;
  int warp_size_;
  FaultRecord* faults_;
};

class CacheAppendKernel final : public ops::KVCacheAppendFwdOp::KvCacheAppend::Impl<GpuFloatKernel> {
 public:
  explicit CacheAppendKernel(const Call& call);
  void forward(const Tensor& k_cache, const Tensor& v_cache, const Tensor& k_new, const Tensor& v_new,
               const Tensor& cache_seqlens) override;

 private:
  FaultRecord* faults_;
};

class PagedCacheAppendKernel final : public ops::PagedKVCacheAppendFwdOp::PagedKvCacheAppend::Impl<GpuFloatKernel> {
 public:
  explicit PagedCacheAppendKernel(const Call& call);
  void forward(const Tensor& k_pages, const Tensor& v_pages, const Tensor& k_new, const Tensor& v_new,
               const Tensor& block_table, const Tensor& cache_seqlens) override;

 private:
  FaultRecord* faults_;
};

// Reads its ids from device memory, with the checks and reports of the kernels above.
class EmbeddingKernel final : public ops::EmbeddingFwdOp::Embedding::Impl<GpuFloatKernel> {
 public:
  explicit EmbeddingKernel(const Call& call);
  Tensor forward(const Tensor& ids, const Tensor& weight) override;

 private:
  FaultRecord* faults_;
};

class MoeRouteKernel final : public ops::MoERouteFwdOp::MoeRoute::Impl<GpuFloatKernel> {
 public:
  explicit MoeRouteKernel(const Call& call);
  Result forward(const Tensor& router_logits, const Tensor& correction_bias) override;

 private:
  int warp_size_;
};

// MoeExpertsKernel's forward for a kernel type of the call (faults: the device's fault record;
// `hopper` as MoeExpertsArgs::hopper).
Tensor run_moe_experts(const ops::MoEExpertsFwdOp::MoeExperts::Call& call, FaultRecord* faults, int warp_size,
                       bool hopper, const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                       const Tensor& w_gate_up, const Tensor& w_down);

// Reads its expert ids from device memory, with the checks and reports of the kernels above.
class MoeExpertsKernel final : public ops::MoEExpertsFwdOp::MoeExperts::Impl<GpuFloatKernel> {
 public:
  explicit MoeExpertsKernel(const Call& call);
  Tensor forward(const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                 const Tensor& w_gate_up, const Tensor& w_down) override;

 private:
  FaultRecord* faults_;
  int warp_size_;
};

// One thread per output element, NCHW.
class MaxPool2dKernel final : public ops::MaxPool2dFwdOp::MaxPool2d::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& y) override;
};

class AvgPool2dKernel final : public ops::AvgPool2dFwdOp::AvgPool2d::Impl<GpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& y) override;
};

}  // namespace tileops::gpu
