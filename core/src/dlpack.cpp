#include "tileops/dlpack.hpp"

#include <dlpack/dlpack.h>

#include <memory>
#include <string>

#include "tileops/errors.hpp"

namespace tileops {
namespace {

// DLPack 0.8 added a dedicated boolean code; older producers send bool as 8-bit uint.
constexpr std::uint8_t kDLBoolCode = 6;

struct DeviceCode {
  DLDeviceType code;
  const char* type;
};

constexpr DeviceCode kDeviceCodes[] = {
    {kDLCPU, "cpu"},
    {kDLCUDA, "cuda"},
    {kDLROCM, "hip"},
};

DType dtype_from_dl(const DLDataType& t) {
  if (t.lanes != 1) {
    throw TypeError("from_dlpack: vector dtypes are not supported (lanes = " + std::to_string(t.lanes) +
                    ", expected 1)");
  }
  switch (t.code) {
    case kDLInt:
      if (t.bits == 8) return DType::int8;
      if (t.bits == 32) return DType::int32;
      if (t.bits == 64) return DType::int64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::uint8;
      break;
    case kDLFloat:
      if (t.bits == 16) return DType::float16;
      if (t.bits == 32) return DType::float32;
      if (t.bits == 64) return DType::float64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::bfloat16;
      break;
    case kDLBoolCode:
      if (t.bits == 8) return DType::bool_;
      break;
    default:
      break;
  }
  throw TypeError("from_dlpack: unsupported DLPack dtype (code " + std::to_string(t.code) + ", " +
                  std::to_string(t.bits) + " bits); expected bool, int8, uint8, int32, int64, float16, " +
                  "bfloat16, float32 or float64");
}

DLDataType dtype_to_dl(DType d) {
  DLDataType t{};
  t.lanes = 1;
  t.bits = static_cast<std::uint8_t>(dtype_bits(d));
  switch (d) {
    case DType::bool_: t.code = kDLBoolCode; break;
    case DType::int8:
    case DType::int32:
    case DType::int64: t.code = kDLInt; break;
    case DType::uint8: t.code = kDLUInt; break;
    case DType::float16:
    case DType::float32:
    case DType::float64: t.code = kDLFloat; break;
    case DType::bfloat16: t.code = kDLBfloat; break;
  }
  return t;
}

Device device_from_dl(const DLDevice& d) {
  for (const auto& entry : kDeviceCodes) {
    if (entry.code == d.device_type) return Device(DeviceType::intern(entry.type), d.device_id);
  }
  throw TypeError("from_dlpack: unsupported DLPack device type " + std::to_string(d.device_type) +
                  "; expected CPU (1), CUDA (2) or ROCm (10)");
}

DLDevice device_to_dl(const Device& d) {
  for (const auto& entry : kDeviceCodes) {
    if (d.type().name() == entry.type) return DLDevice{entry.code, d.index()};
  }
  throw TypeError("to_dlpack: device " + d.str() + " has no DLPack device code; expected cpu, cuda or hip");
}

// What an exported DLManagedTensor owns: a handle on the tensor (keeping the storage alive)
// and the arrays DLTensor points into.
struct ExportContext {
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* self) { delete static_cast<ExportContext*>(self->manager_ctx); }

}  // namespace

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw ValueError("from_dlpack: the DLManagedTensor pointer is null");
  const DLTensor& t = managed->dl_tensor;
  const DType dtype = dtype_from_dl(t.dtype);
  const Device device = device_from_dl(t.device);
  if (t.ndim < 0) throw ValueError("from_dlpack: ndim is " + std::to_string(t.ndim) + ", expected >= 0");
  Shape shape(t.shape, t.shape + t.ndim);
  Strides strides = t.strides != nullptr ? Strides(t.strides, t.strides + t.ndim) : contiguous_strides(shape);
  // Every size below fits once the view passes, and it must pass before the storage takes
  // ownership: a failure after that would run the producer's deleter.
  Tensor::check_view(shape, strides, 0, dtype, std::nullopt, "from_dlpack");
  std::int64_t max_offset = 0;
  for (int i = 0; i < t.ndim; ++i) {
    if (shape[i] < 0) throw ValueError("from_dlpack: negative extent in shape " + shape_str(shape));
    if (strides[i] < 0) throw ValueError("from_dlpack: negative strides are not supported: " + shape_str(strides));
    if (shape[i] > 0) max_offset += (shape[i] - 1) * strides[i];
  }
  const std::int64_t numel = shape_numel(shape);
  if (numel > 0 && t.data == nullptr) throw ValueError("from_dlpack: data is null for a tensor with elements");
  const std::size_t elem = dtype_size(dtype);
  if (t.byte_offset % elem != 0) {
    throw ValueError("from_dlpack: byte_offset " + std::to_string(t.byte_offset) +
                     " is not a multiple of the element size " + std::to_string(elem));
  }
  const std::size_t extent = numel > 0 ? static_cast<std::size_t>(max_offset + 1) * elem : 0;
  void* base = static_cast<std::byte*>(t.data) + t.byte_offset;
  auto storage = std::make_shared<Storage>(base, extent, device, [managed](void*) {
    if (managed->deleter != nullptr) managed->deleter(managed);
  });
  return Tensor::from_storage(std::move(storage), shape, strides, 0, dtype);
}

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  if (!tensor.defined()) throw TypeError("to_dlpack: the tensor is undefined");
  if (tensor.device().is_meta()) throw TypeError("to_dlpack: meta tensors carry no data and cannot be exported");
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = tensor;
  ctx->shape.assign(tensor.shape().begin(), tensor.shape().end());
  ctx->strides.assign(tensor.strides().begin(), tensor.strides().end());
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = tensor.storage() ? tensor.storage()->data() : nullptr;
  t.device = device_to_dl(tensor.device());
  t.ndim = static_cast<std::int32_t>(tensor.dim());
  t.dtype = dtype_to_dl(tensor.dtype());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = static_cast<std::uint64_t>(tensor.offset()) * dtype_size(tensor.dtype());
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = &delete_export;
  return &ctx.release()->managed;
}

}  // namespace tileops
