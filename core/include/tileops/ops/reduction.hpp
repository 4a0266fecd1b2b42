// SumFwdOp and ProdFwdOp: reductions over `dim` (an axis, a list of axes, or every axis); dtype
// is the accumulation and output dtype (None: int64 for integer inputs, else the input's). The
// classes are generated from manifests/reduction.yaml; core/ops/reduction holds their forwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "tileops/extend/kernel.hpp"
#include "tileops/op.hpp"
#include "tileops/ops/gen/reduction.hpp"

namespace tileops {

// x viewed as [outer, reduce, inner]; the result as [outer, inner].
struct ReduceCall final : CallSpec {
  DType in_dtype = DType::float32;
  DType out_dtype = DType::float32;
  bool strided = false;  // inner > 1
  auto fields() const { return std::tie(in_dtype, out_dtype, strided); }
};

// The extents of one reduction.
struct ReduceExtents {
  std::int64_t outer = 1;
  std::int64_t reduce = 1;
  std::int64_t inner = 1;
};

class SumFwdInterface : public KernelInterface {
 public:
  using Interface = SumFwdInterface;
  using Request = ReduceCall;
  static constexpr std::string_view kName = "SumFwdInterface";

  // x: contiguous call.in_dtype on call.device holding extents.outer * reduce * inner
  // elements; y: contiguous call.out_dtype with outer * inner elements. Writes the sums,
  // accumulated in double for floating outputs and int64 for integer ones.
  virtual void forward(const Tensor& x, const Tensor& y, const ReduceExtents& extents) = 0;
};

class ProdFwdInterface : public KernelInterface {
 public:
  using Interface = ProdFwdInterface;
  using Request = ReduceCall;
  static constexpr std::string_view kName = "ProdFwdInterface";

  // As SumFwdInterface::forward, with products.
  virtual void forward(const Tensor& x, const Tensor& y, const ReduceExtents& extents) = 0;
};

// `dim`: nullopt reduces every axis; an int or a list names the axes (negative from the end).
using ReduceDims = std::optional<std::variant<std::int64_t, std::vector<std::int64_t>>>;

}  // namespace tileops
