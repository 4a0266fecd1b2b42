// The call check of a few in-tree ops: the input decodes into one op (RMSNormFwdOp, AddFwdOp,
// GemmFwdOp, SumFwdOp or SoftmaxFwdOp), its construction parameters (values of any kind, or
// absent) and its call-time tensors (present or not, any dtype, rank and extents, contiguous or
// transposed, and AddFwdOp's `out`), all on the meta device, so that no kernel runs. The call is
// made twice (the second replays the remembered check) and its roofline evaluated. Any
// tileops::Error is a refusal; anything else is a finding.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"

namespace {

using tileops::DType;
using tileops::Tensor;
using tileops::Value;

struct OpShape {
  const char* name;
  std::vector<const char*> params;
  std::size_t inputs;
  bool has_out;
};

const OpShape kOps[] = {
    {"RMSNormFwdOp", {"normalized_shape", "eps"}, 2, false},
    {"AddFwdOp", {"alpha"}, 2, true},
    {"GemmFwdOp", {"trans_a", "trans_b"}, 2, false},
    {"SumFwdOp", {"dim", "keepdim", "dtype"}, 1, false},
    {"SoftmaxFwdOp", {"dim"}, 1, false},
};

constexpr DType kDTypes[] = {DType::bool_,   DType::int8,     DType::uint8,   DType::int32,  DType::int64,
                             DType::float16, DType::bfloat16, DType::float32, DType::float64};

constexpr std::int64_t kInts[] = {0,  1,  2,  3,  4,  -1, -2, -3, 7, 8, 64, 4096, std::int64_t{1} << 31,
                                  std::int64_t{1} << 32,  std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::int64_t>::min()};

std::int64_t integer(FuzzedDataProvider& in) {
  if (in.ConsumeBool()) return in.ConsumeIntegralInRange<std::int64_t>(-4, 8);
  if (in.ConsumeBool()) return in.PickValueInArray(kInts);
  return in.ConsumeIntegral<std::int64_t>();
}

std::vector<std::int64_t> integers(FuzzedDataProvider& in, std::size_t max_count) {
  std::vector<std::int64_t> v(in.ConsumeIntegralInRange<std::size_t>(0, max_count));
  for (auto& x : v) x = integer(in);
  return v;
}

Value value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return std::monostate{};
    case 1: return in.ConsumeBool();
    case 2: return integer(in);
    case 3: {
      static constexpr double kReals[] = {0.0, 1e-5, -1.0, 1e300, std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::quiet_NaN()};
      return in.ConsumeBool() ? in.PickValueInArray(kReals) : in.ConsumeFloatingPoint<double>();
    }
    case 4: return in.ConsumeRandomLengthString(16);
    case 5: return in.PickValueInArray(kDTypes);
    case 6: return tileops::Device::meta();
    default: return integers(in, 8);
  }
}

// The extents of one meta tensor, or nothing when its byte size would not fit in 63 bits
// (tensors that large are the tensor layer's to refuse; the harness does not build them).
std::optional<std::vector<std::int64_t>> extents(FuzzedDataProvider& in, DType dtype) {
  std::vector<std::int64_t> shape(in.ConsumeIntegralInRange<std::size_t>(0, 6));
  std::int64_t bytes = static_cast<std::int64_t>(tileops::dtype_size(dtype));
  for (auto& d : shape) {
    d = in.ConsumeProbability<float>() < 0.9f ? in.ConsumeIntegralInRange<std::int64_t>(0, 8) : integer(in);
    if (d < 0) return shape;  // negative extents are refused by Tensor::empty itself
    if (__builtin_mul_overflow(bytes, std::max<std::int64_t>(d, 1), &bytes)) return std::nullopt;
  }
  return shape;
}

std::optional<Tensor> tensor(FuzzedDataProvider& in) {
  const DType dtype = in.PickValueInArray(kDTypes);
  const auto shape = extents(in, dtype);
  if (!shape) return std::nullopt;
  Tensor t = Tensor::empty(*shape, dtype, tileops::Device::meta());
  if (t.dim() >= 2 && in.ConsumeProbability<float>() < 0.2f) t = t.transpose(0, 1);
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const OpShape& op = in.PickValueInArray(kOps);
  tileops::ParamMap params;
  for (const char* name : op.params) {
    if (in.ConsumeProbability<float>() < 0.6f) params.set(name, value(in));
  }
  if (in.ConsumeProbability<float>() < 0.05f) params.set(in.ConsumeRandomLengthString(8), value(in));
  try {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < op.inputs; ++i) {
      if (in.ConsumeProbability<float>() < 0.1f) {
        inputs.emplace_back();
        continue;
      }
      std::optional<Tensor> t = tensor(in);
      if (!t) return 0;
      inputs.push_back(std::move(*t));
    }
    Tensor out;
    if (op.has_out && in.ConsumeProbability<float>() < 0.3f) {
      std::optional<Tensor> t = tensor(in);
      if (!t) return 0;
      out = std::move(*t);
    }
    const std::unique_ptr<tileops::Op> instance = tileops::find_op(op.name).make(params, tileops::Target{});
    for (int repeat = 0; repeat < 2; ++repeat) instance->call(tileops::CallArgs{inputs, out});
    instance->eval_roofline();
  } catch (const tileops::Error&) {
  }
  return 0;
}
