// The GPU implementations of the op set's kernel interfaces, shared by the cuda and rocm
// plugins (devices {kDeviceType}, supported_archs kKernelArchs). Each serves every call of its
// interface that its refusal accepts, whatever the strides of the op's own views (the ops pass
// contiguous tensors; odd offsets take the kernels' scalar paths), and launches on the calling
// thread's current stream of the call's device, allocating its outputs (and any workspace)
// from that device's stream-ordered pool. Nothing is compiled, queried from the device or
// synchronised on a call. On cuda, kKernelArchs is empty ("every arch"): the build embeds sm_90a
// machine code and compute_75 PTX, which the driver compiles for any GPU that CUDA 13 supports.
#pragma once

#include "tileops/extend/ops/elementwise_kernels.hpp"
#include "tileops/extend/ops/norm_kernels.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rope.hpp"
#include "tileops/ops/softmax.hpp"
#include "vendor.hpp"

namespace tileops::gpu {

// float32, float16 and bfloat16: the floating dtypes the kernels compute in float.
std::optional<std::string> refuse_unless_float(DType dtype);

class RMSNormKernel final : public Kernel, public RMSNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const LayerNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit RMSNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight) override;

 private:
  LayerNormCall call_;
};

class LayerNormKernel final : public Kernel, public LayerNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const LayerNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit LayerNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) override;

 private:
  LayerNormCall call_;
};

// Along the last axis (inner == 1) and along any inner axis.
class SoftmaxKernel final : public Kernel, public SoftmaxFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const SoftmaxCall& call) { return refuse_unless_float(call.dtype); }
  explicit SoftmaxKernel(const SoftmaxCall& call) : call_(call) {}
  Tensor forward(const Tensor& x) override;

 private:
  SoftmaxCall call_;
};

class RopeKernel final : public Kernel, public RopeFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const RopeCall& call) { return refuse_unless_float(call.dtype); }
  explicit RopeKernel(const RopeCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& positions) override;

 private:
  RopeCall call_;
};

class SiluAndMulKernel final : public Kernel, public SiluAndMulFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const ElementwiseCall& call) { return refuse_unless_float(call.dtype); }
  explicit SiluAndMulKernel(const ElementwiseCall&) {}
  Tensor forward(const Tensor& x) override;
};

// Every broadcast kind, for float32, float16, bfloat16, int32 and int64. A general broadcast
// whose operands keep more than kMaxStridedRank (25) axes once coalesced raises ValueError.
class AddKernel final : public Kernel, public AddFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const AddCall& call);
  explicit AddKernel(const AddCall& call) : call_(call) {}
  void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) override;

 private:
  AddCall call_;
};

class ReluKernel final : public Kernel, public ReluFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const ElementwiseCall& call) { return refuse_unless_float(call.dtype); }
  explicit ReluKernel(const ElementwiseCall&) {}
  void forward(const Tensor& x, const Tensor& out) override;
};

// Holds the heads' slopes in device memory, uploaded once when the entry is built.
class AlibiKernel final : public Kernel, public AlibiFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const AlibiCall& call) { return refuse_unless_float(call.dtype); }
  explicit AlibiKernel(const AlibiCall& call);
  Tensor forward() override;

 private:
  AlibiCall call_;
  Tensor slopes_;
};

// Sum and product for every input and output dtype of the manifest (float16, bfloat16,
// float32, float64, int32, int64), accumulated as the interface says.
template <bool kProduct, class Interface>
class ReduceKernel final : public Kernel, public Interface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const ReduceCall& call);
  explicit ReduceKernel(const ReduceCall& call);
  void forward(const Tensor& x, const Tensor& y, const ReduceExtents& extents) override;

 private:
  int sm_count_;
};
using SumKernel = ReduceKernel<false, SumFwdInterface>;
using ProdKernel = ReduceKernel<true, ProdFwdInterface>;

// GEMM of at most kMaxDotRows (8) rows of a, not transposed, against b stored [n, k]
// (trans_b: linear-layer weights) in float32, float16 or bfloat16, reading b once: the decode
// GEMM of a vendor without a library GEMM (hip). On CUDA cuBLASLt is preferred over it, as
// it is faster at every decode shape measured (bench/results/gpu_block_h200_*.md), so there
// it serves what cuBLASLt refuses, and the GPU tests run it directly: the source the hip
// plugin runs is checked on real hardware.
class DotRowsGemmKernel final : public Kernel, public GemmFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const GemmCall& call);
  explicit DotRowsGemmKernel(const GemmCall& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  GemmCall call_;
  int sm_count_;
};

class BatchNormTrainKernel final : public Kernel, public BatchNormTrainFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const BatchNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit BatchNormTrainKernel(const BatchNormCall& call);
  BatchNormTrainResult forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                               const Tensor& weight, const Tensor& bias) override;

 private:
  BatchNormCall call_;
  int sm_count_;
};

class BatchNormInferKernel final : public Kernel, public BatchNormInferFwdInterface {
 public:
  static constexpr DeviceTypes devices{kDeviceType};
  static constexpr ArchList supported_archs = kKernelArchs;
  static std::optional<std::string> refusal(const BatchNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit BatchNormInferKernel(const BatchNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;

 private:
  BatchNormCall call_;
};

}  // namespace tileops::gpu
