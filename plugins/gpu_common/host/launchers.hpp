// The host-side interface of the shared GPU kernels: one function per kernel family, taking
// raw device pointers, extents and the stream to launch on (a cudaStream_t / hipStream_t as
// void*; nullptr is the default stream). The device code behind them (../kernels/*.cu)
// compiles with nvcc and with hipcc. Every launcher:
// - launches on the calling thread's current device, which must be the device of every
//   pointer (the kernel classes hold a DeviceGuard);
// - chooses 16-byte accesses only where every pointer it moves that way is 16-byte aligned
//   and the extents allow it, and a scalar path otherwise (views with odd offsets);
// - handles empty extents by launching nothing, and extents too large for the grid by
//   looping inside the kernels;
// - throws RuntimeError when the launch fails, and TypeError for a dtype it has no body for
//   (the kernel classes refuse those calls first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tileops/dtype.hpp"

namespace tileops::gpu {

// Rows of `n` contiguous elements (x and y contiguous [rows, n]; weight and bias [n] or null).
struct RowNormArgs {
  const void* x;
  const void* weight;
  const void* bias;
  void* y;
  std::int64_t rows;
  std::int64_t n;
  float eps;
  DType dtype;  // float32, float16 or bfloat16, for x, y, weight and bias
  // Blocks of the launch's kernel the call's device holds at once (rms_norm_resident_blocks or
  // layer_norm_resident_blocks, counted when the kernel type is made); 0: not known. Where one
  // block per row would fill them more than once and less than twice, the grid is these blocks,
  // each looping over rows (row_blocks in kernels/launch.cuh).
  std::int64_t resident_blocks = 0;
};
// y = x / sqrt(mean(x^2) + eps) * weight, accumulated in float.
void launch_rms_norm(const RowNormArgs& args, void* stream);
// y = (x - mean) / sqrt(biased var + eps) * weight + bias, accumulated in float.
void launch_layer_norm(const RowNormArgs& args, void* stream);
// Blocks of the kernel launch_rms_norm (launch_layer_norm) takes for rows of n elements of dtype
// in 16-byte-aligned tensors that the current device, of sm_count multiprocessors, holds at once.
// Queries the device: call it when a kernel type is made, not per call. Throws TypeError for a
// dtype the kernels do not take.
std::int64_t rms_norm_resident_blocks(std::int64_t n, DType dtype, int sm_count);
std::int64_t layer_norm_resident_blocks(std::int64_t n, DType dtype, int sm_count);

// residual = x + residual, rounded to dtype and stored in place, then y = r / sqrt(mean(r^2) +
// eps) * weight with r the stored residual, accumulated in float; x, residual and y contiguous
// [rows, n], weight [n]. x may be residual itself; y overlaps neither.
struct FusedAddRmsNormArgs {
  const void* x;
  void* residual;
  const void* weight;
  void* y;
  std::int64_t rows;
  std::int64_t n;
  float eps;
  DType dtype;  // float32, float16 or bfloat16
};
void launch_fused_add_rms_norm(const FusedAddRmsNormArgs& args, void* stream);

// Softmax of contiguous x viewed as [outer, n, inner] along the middle axis, into y (same
// layout): exp(x - max) / sum(exp(x - max)), in float.
struct SoftmaxArgs {
  const void* x;
  void* y;
  std::int64_t outer;
  std::int64_t n;
  std::int64_t inner;
  DType dtype;  // float32, float16 or bfloat16
  // For inner == 1, as RowNormArgs::resident_blocks, from softmax_resident_blocks.
  std::int64_t resident_blocks = 0;
};
void launch_softmax(const SoftmaxArgs& args, void* stream);
// As rms_norm_resident_blocks, for softmax along rows of n elements (inner == 1).
std::int64_t softmax_resident_blocks(std::int64_t n, DType dtype, int sm_count);

// y[m, j] = silu(x[m, j]) * x[m, n + j] for contiguous x [rows, 2n] and y [rows, n].
struct SiluAndMulArgs {
  const void* x;
  void* y;
  std::int64_t rows;
  std::int64_t n;
  DType dtype;  // float32, float16 or bfloat16
};
void launch_silu_and_mul(const SiluAndMulArgs& args, void* stream);

// y[m, j] = gelu(x[m, j]) * x[m, n + j] for contiguous x [rows, 2n] and y [rows, n], gelu as
// launch_gelu computes it (erf form, or tanh with tanh_approximation).
struct GeluAndMulArgs {
  const void* x;
  void* y;
  std::int64_t rows;
  std::int64_t n;
  DType dtype;  // float32, float16 or bfloat16
  bool tanh_approximation;
};
void launch_gelu_and_mul(const GeluAndMulArgs& args, void* stream);

// Rotary embedding of contiguous x [B, S, H, 2 * half] (or [B, H, S, 2 * half] when
// heads_first) into y (same layout): for position p (positions[s], or s when positions is null;
// positions an int64 device array of S) and i < half, with angle = p * theta^(-i / half) /
// factors[i] (factors a float32 device array of half, or null for ones), c = scale cos(angle)
// and sn = scale sin(angle), the pair (a, b) becomes (a c - b sn, b c + a sn). The pair is
// (i, i + half), or (2i, 2i + 1) when interleaved.
// With long_factors (a float32 device array of half) and positions, the device picks the
// factors: long_factors when the largest position + 1 exceeds long_after, else factors; the
// choice goes through `choice`, one int32 of device memory the caller owns for the launch.
struct RopeArgs {
  const void* x;
  const std::int64_t* positions;
  const float* factors;
  void* y;
  std::int64_t rows;  // B * S * H
  std::int64_t seq;   // S
  std::int64_t heads; // H
  std::int64_t half;  // D / 2
  bool heads_first;
  bool interleaved;
  double log2_theta;
  double scale;
  DType dtype;  // float32, float16 or bfloat16
  const float* long_factors = nullptr;
  std::int64_t long_after = 0;
  std::int32_t* choice = nullptr;
};
void launch_rope(const RopeArgs& args, void* stream);

// The most axes a strided operand may keep once axes that are contiguous in every operand are
// merged and unit axes dropped.
inline constexpr int kMaxStridedRank = 25;

// out = a + alpha * b, out contiguous with `numel` elements (out may be a itself unless
// `strided`). Without `strided`, a is contiguous like out and b is either contiguous like out
// (b_period == numel) or one contiguous row of `b_period` elements repeated along out.
// With `strided`, a and b are read through the strides (in elements; 0 on broadcast axes) of
// the coalesced `shape` of out, of rank `rank` <= kMaxStridedRank.
struct AddArgs {
  const void* a;
  const void* b;
  void* out;
  std::int64_t numel;
  std::int64_t b_period;
  double alpha;  // integral for integer dtypes
  DType dtype;   // float32, float16, bfloat16, int32 or int64
  bool strided = false;
  int rank = 0;
  std::int64_t shape[kMaxStridedRank] = {};
  std::int64_t a_strides[kMaxStridedRank] = {};
  std::int64_t b_strides[kMaxStridedRank] = {};
};
void launch_add(const AddArgs& args, void* stream);

// out = max(x, 0) over `numel` contiguous elements (NaN stays NaN); out may be x.
struct ReluArgs {
  const void* x;
  void* out;
  std::int64_t numel;
  DType dtype;  // float32, float16 or bfloat16
};
void launch_relu(const ReluArgs& args, void* stream);

// out = gelu(x) over `numel` contiguous elements, in float: x * Phi(x) (Phi the standard normal
// distribution function), or with tanh_approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
// x^3))). NaN stays NaN, +inf gives +inf and -inf gives -0 (the limits). out may be x.
struct GeluArgs {
  const void* x;
  void* out;
  std::int64_t numel;
  DType dtype;  // float32, float16 or bfloat16
  bool tanh_approximation;
};
void launch_gelu(const GeluArgs& args, void* stream);

// y[h, i, j] = slopes[h] * (j - i), computed in double, for contiguous y [heads, seq, seq].
struct AlibiArgs {
  const double* slopes;  // device memory, `heads` values
  void* y;
  std::int64_t heads;
  std::int64_t seq;
  DType dtype;  // float32, float16 or bfloat16
};
void launch_alibi(const AlibiArgs& args, void* stream);

// Sum, product or (with divisor) mean of contiguous x viewed as [outer, reduce, inner] over the middle axis into
// contiguous y [outer, inner], accumulated in int64 for integer outputs and in double
// otherwise (the reference kernels' rule). A reduction split across blocks writes partial
// results to `workspace` (device memory of reduce_workspace_bytes(...) bytes) and combines
// them in a second launch, in a fixed order: results do not depend on timing.
struct ReduceArgs {
  const void* x;
  void* y;
  std::int64_t outer;
  std::int64_t reduce;
  std::int64_t inner;
  DType in_dtype;   // float16, bfloat16, float32, float64, int32 or int64
  DType out_dtype;  // likewise
  bool product;
  int sm_count;  // multiprocessors of the device: how far to split
  // Every floating result is divided by it before it is stored (a mean: reduce, so that an
  // empty reduced axis gives 0 / 0, NaN); integer results ignore it.
  double divisor = 1.0;
};
std::size_t reduce_workspace_bytes(const ReduceArgs& args);
void launch_reduce(const ReduceArgs& args, void* workspace, void* stream);

// The single-launch batch-norm training form on a device: blocks of it a multiprocessor holds at
// once (0: the form is not used) and rows a thread keeps in shared memory between its phases.
struct BatchNormSingleLaunch {
  int blocks = 0;
  int kept_rows = 0;
};
// Batch normalization of contiguous x viewed as [n, channels, inner] into y (same layout).
// Statistics and parameters are float32 [channels]; weight and bias may be null.
struct BatchNormArgs {
  const void* x;
  void* y;
  std::int64_t n;
  std::int64_t channels;
  std::int64_t inner;
  const float* weight;
  const float* bias;
  float* running_mean;  // updated in place when training
  float* running_var;
  float* batch_mean;  // training: written with the batch mean
  float* batch_rstd;  // training: 1 / sqrt(biased batch variance + eps)
  double eps;
  double momentum;
  DType dtype;  // float32, float16 or bfloat16
  int sm_count;
  // Training with channels-last x (inner == 1) in 16-byte packs runs as one cooperative launch
  // when every tile of channels gets a resident block, in this form on the call's device
  // (batch_norm_single_launch, read when the kernel is built). 0 blocks: always the three
  // launches (statistics, their combination, output).
  BatchNormSingleLaunch single_launch;
};
// Rows a thread of the single launch keeps in shared memory by default: x is read once for
// them instead of twice. 16 (64 KiB a block) measured fastest of 0-20 on the H200.
inline constexpr int kBatchNormKeptRows = 16;
// That form for `dtype` keeping up to `kept_rows` rows a thread in shared memory: kept_rows where
// the device holds as many blocks keeping them as keeping none, else 0. Allows the kernel the
// shared memory it then takes. Throws ValueError for kept_rows < 0.
BatchNormSingleLaunch batch_norm_single_launch(DType dtype, int kept_rows = kBatchNormKeptRows);
// Device bytes the training pass needs as `workspace` (inference needs none).
std::size_t batch_norm_training_workspace_bytes(const BatchNormArgs& args);
// Training: batch statistics (accumulated in double), running statistics updated with the
// unbiased variance, then y; `workspace` holds batch_norm_training_workspace_bytes(args). Inference:
// y from the running statistics, read only; `workspace` is unused and may be null.
void launch_batch_norm(const BatchNormArgs& args, bool training, void* workspace, void* stream);

// d[i, j] = sum_p a[i, p] * b[j, p], accumulated in float, for contiguous a [m, k], b [n, k]
// and d [m, n] with m <= kMaxDotRows (a few rows against linear-layer weights stored [n, k]).
// Throws ValueError for more rows.
inline constexpr int kMaxDotRows = 8;
struct DotRowsArgs {
  const void* a;
  const void* b;
  void* d;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
  DType dtype;   // float32, float16 or bfloat16
  int sm_count;  // multiprocessors of the device: how many rows of b each warp takes
  int warp_size;  // threads of a warp on the device (GpuRuntime::warp_size): the launch geometry
};
void launch_dot_rows(const DotRowsArgs& args, void* stream);

// d = op(a) · op(b) for every shape and transposition, accumulated in float: a contiguous
// [m, k] ([k, m] when trans_a), b contiguous [k, n] ([n, k] when trans_b), d contiguous [m, n]
// sharing no memory with a or b. Any alignment. k = 0 writes zeros; m = 0 or n = 0 launches
// nothing. Throws ValueError for extents tiled_gemm_extent_refusal names.
struct TiledGemmArgs {
  const void* a;
  const void* b;
  void* d;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;
  bool trans_a;
  bool trans_b;
  DType dtype;   // float32, float16 or bfloat16
  int sm_count;  // multiprocessors of the device: the tile size
};
void launch_tiled_gemm(const TiledGemmArgs& args, void* stream);

// Why the tiled GEMM cannot take extents m, n, k, or nullopt: a negative extent, or an operand
// of 2^60 elements or more, whose element offsets (plus a tile), or their byte addresses, could
// overflow its 64-bit index math.
inline std::optional<std::string> tiled_gemm_extent_refusal(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::string extents = "m = " + std::to_string(m) + ", n = " + std::to_string(n) + ", k = " + std::to_string(k);
  if (m < 0 || n < 0 || k < 0) return "negative extent: " + extents;
  constexpr std::int64_t kLimit = std::int64_t{1} << 60;
  const auto below = [](std::int64_t x, std::int64_t y) { return x == 0 || y < kLimit / x; };
  if (!below(1, m) || !below(1, n) || !below(1, k) || !below(m, k) || !below(k, n) || !below(m, n)) {
    return "an operand of 2^60 or more elements at " + extents + " overflows the kernel's 64-bit offsets";
  }
  return std::nullopt;
}

// dst[i] = src[i] over two strided views of `rank` axes of `shape` (strides in elements of
// `element_size` bytes). Returns false, launching nothing, when the element size is not 1, 2,
// 4 or 8 or the views keep more than kMaxStridedRank axes once coalesced.
bool launch_strided_copy(void* dst, const void* src, const std::int64_t* shape, std::size_t rank,
                         const std::int64_t* dst_strides, const std::int64_t* src_strides, std::size_t element_size,
                         void* stream);

}  // namespace tileops::gpu
