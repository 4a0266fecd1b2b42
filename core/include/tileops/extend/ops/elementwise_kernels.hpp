// Call specs and kernel interfaces of the elementwise ops (SiluAndMul, Add, Relu, Alibi).
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/extend/kernel.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

// One elementwise call: the dtype is the only fact implementations select and build on.
struct ElementwiseCall final : CallSpec {
  DType dtype = DType::float32;
  auto fields() const { return std::tie(dtype); }
};

class SiluAndMulFwdInterface : public KernelInterface {
 public:
  using Interface = SiluAndMulFwdInterface;
  using Request = ElementwiseCall;
  static constexpr std::string_view kName = "SiluAndMulFwdInterface";

  // x: contiguous [M, 2N] in call.dtype on call.device. Returns a new contiguous [M, N] with
  // y[m, j] = silu(x[m, j]) * x[m, N + j], silu(v) = v / (1 + exp(-v)).
  virtual Tensor forward(const Tensor& x) = 0;
};

// How the second operand of an addition lines up with the output.
enum class BroadcastKind : std::uint8_t {
  same_shape,  // a, b and the output have one shape
  row,         // a has the output's shape; b is one row of the output's last axis, repeated
  general,     // any other NumPy broadcast
};

struct AddCall final : CallSpec {
  DType dtype = DType::float32;
  BroadcastKind kind = BroadcastKind::general;
  auto fields() const { return std::tie(dtype, kind); }
};

class AddFwdInterface : public KernelInterface {
 public:
  using Interface = AddFwdInterface;
  using Request = AddCall;
  static constexpr std::string_view kName = "AddFwdInterface";

  // out = a + alpha * b with NumPy broadcasting. a and b: call.dtype on call.device, any
  // strides (contiguous when call.kind is same_shape or row); out: contiguous, shaped like the
  // broadcast, call.dtype; out may be a itself (same_shape and row only). For integer dtypes
  // alpha is integral.
  virtual void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) = 0;
};

class ReluFwdInterface : public KernelInterface {
 public:
  using Interface = ReluFwdInterface;
  using Request = ElementwiseCall;
  static constexpr std::string_view kName = "ReluFwdInterface";

  // out = max(x, 0). x: contiguous, call.dtype, call.device; out: contiguous, shaped like x;
  // out may be x itself (in place).
  virtual void forward(const Tensor& x, const Tensor& out) = 0;
};

struct AlibiCall final : CallSpec {
  std::int64_t num_heads = 0;
  std::int64_t seq_len = 0;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(num_heads, seq_len, dtype); }
};

class AlibiFwdInterface : public KernelInterface {
 public:
  using Interface = AlibiFwdInterface;
  using Request = AlibiCall;
  static constexpr std::string_view kName = "AlibiFwdInterface";

  // Returns a new contiguous [num_heads, seq_len, seq_len] tensor in call.dtype on
  // call.device: y[h, i, j] = slope(h) * (j - i), with the ALiBi slopes of alibi_slope().
  virtual Tensor forward() = 0;
};

// The ALiBi slope of head `head` of `num_heads`: 2^(-8 (h+1) / n) for the largest power of two
// n <= num_heads, then the odd-indexed slopes of 2n for the remaining heads.
TILEOPS_API double alibi_slope(std::int64_t head, std::int64_t num_heads);

}  // namespace tileops
