#include "tileops/dlpack.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops {
namespace {

// DLPack 0.8 added a dedicated boolean code; older producers send bool as 8-bit uint.
constexpr std::uint8_t kDLBoolCode = 6;

// The most dimensions an imported tensor may have (NumPy's limit).
constexpr std::int32_t kMaxDLPackRank = 64;

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

DLDataType dtype_to_dl(DType d, bool versioned) {
  if (d == DType::bool_ && !versioned) {
    throw TypeError("to_dlpack: bool has no code in DLPack 0.x (kDLBool came with 0.8, which a DLManagedTensor "
                    "consumer may predate); export with to_dlpack_versioned or convert with tensor.to(DType::uint8)");
  }
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

// The device type code as the integer the producer wrote: a value outside DLDeviceType's
// enumerators must not be read through the enum type.
std::int32_t device_type_code(const DLDevice& d) {
  static_assert(sizeof(d.device_type) == sizeof(std::int32_t));
  std::int32_t code = 0;
  std::memcpy(&code, &d.device_type, sizeof code);
  return code;
}

DLDevice device_to_dl(const Device& d) {
  for (const auto& entry : kDeviceCodes) {
    if (d.type().name() == entry.type) return DLDevice{entry.code, d.index()};
  }
  throw TypeError("to_dlpack: device " + d.str() + " has no DLPack device code; expected cpu, cuda or hip");
}

// What an exported managed tensor owns: a handle on the tensor (keeping the storage alive)
// and the arrays DLTensor points into. `Managed` is DLManagedTensor or DLManagedTensorVersioned.
template <typename Managed>
struct ExportContext {
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  Managed managed{};
};

template <typename Managed>
void delete_export(Managed* self) {
  delete static_cast<ExportContext<Managed>*>(self->manager_ctx);
}

template <typename Managed>
std::unique_ptr<ExportContext<Managed>> export_context(const Tensor& tensor, const char* who, bool versioned) {
  if (!tensor.defined()) throw TypeError(std::string(who) + ": the tensor is undefined");
  if (tensor.device().is_meta()) {
    throw TypeError(std::string(who) + ": meta tensors carry no data and cannot be exported");
  }
  auto ctx = std::make_unique<ExportContext<Managed>>();
  ctx->tensor = tensor;
  ctx->shape.assign(tensor.shape().begin(), tensor.shape().end());
  ctx->strides.assign(tensor.strides().begin(), tensor.strides().end());
  DLTensor& t = ctx->managed.dl_tensor;
  // data points at the first element and byte_offset stays 0: consumers that ignore
  // byte_offset (libtorch 1.13) would otherwise read the view from the storage's start.
  t.data = tensor.data_ptr();
  t.device = device_to_dl(tensor.device());
  t.ndim = static_cast<std::int32_t>(tensor.dim());
  t.dtype = dtype_to_dl(tensor.dtype(), versioned);
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx.get();
  ctx->managed.deleter = &delete_export<Managed>;
  return ctx;
}

// Throws ValueError when the extents, zeros counted as ones, multiply past 2^63: the element
// count and every stride the tensor layer derives from the shape must be representable.
void check_extent_product(const Shape& shape) {
  std::int64_t product = 1;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(product, std::max<std::int64_t>(d, 1), &product)) {
      throw ValueError("from_dlpack: the extents of shape " + shape_str(shape) + " multiply past 2^63");
    }
  }
}

// Row-major strides for a producer that gave none (the shape passed check_extent_product).
Strides compact_strides(const Shape& shape) {
  Strides strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

// The bytes from the first element to the end of the last one (0 for an empty tensor). Throws
// ValueError when the extents and strides reach past what 64-bit offsets can address.
std::size_t byte_extent(const Shape& shape, const Strides& strides, std::size_t elem) {
  for (std::int64_t d : shape) {
    if (d == 0) return 0;
  }
  std::int64_t last = 0;  // offset of the last element, in elements
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) || __builtin_add_overflow(last, reach, &last)) {
      throw ValueError("from_dlpack: shape " + shape_str(shape) + " with strides " + shape_str(strides) +
                       " reaches past 2^63 elements");
    }
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<std::int64_t>(elem), &bytes)) {
    throw ValueError("from_dlpack: shape " + shape_str(shape) + " with strides " + shape_str(strides) + " spans more than 2^63 bytes");
  }
  return static_cast<std::size_t>(bytes);
}

// The tensor `t` describes, its storage released by `release` when the last view is gone.
// Where the tensor cannot be made, `disarm` runs while the storage still lives, so that a
// refused import never releases what the caller still owns.
template <typename Release, typename Disarm>
Tensor view_dltensor(const DLTensor& t, bool read_only, Release release, Disarm disarm) {
  const DType dtype = dtype_from_dl(t.dtype);
  if (t.ndim < 0 || t.ndim > kMaxDLPackRank) {
    throw ValueError("from_dlpack: ndim is " + std::to_string(t.ndim) + ", expected 0 to " +
                     std::to_string(kMaxDLPackRank));
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    throw ValueError("from_dlpack: shape is null for a tensor of ndim " + std::to_string(t.ndim));
  }
  const Shape shape(t.shape, t.shape + t.ndim);
  for (std::int64_t d : shape) {
    if (d < 0) throw ValueError("from_dlpack: negative extent in shape " + shape_str(shape));
  }
  check_extent_product(shape);
  const Strides strides = t.strides != nullptr ? Strides(t.strides, t.strides + t.ndim) : compact_strides(shape);
  for (std::int64_t s : strides) {
    if (s < 0) throw ValueError("from_dlpack: negative strides are not supported: " + shape_str(strides));
  }
  const std::size_t elem = dtype_size(dtype);
  const std::size_t extent = byte_extent(shape, strides, elem);
  if (extent > 0 && t.data == nullptr) throw ValueError("from_dlpack: data is null for a tensor with elements");
  const auto address = reinterpret_cast<std::uintptr_t>(t.data);
  const auto room = static_cast<std::uint64_t>(std::numeric_limits<std::uintptr_t>::max() - address);
  if (t.byte_offset > room || extent > room - t.byte_offset) {
    throw ValueError("from_dlpack: byte_offset " + std::to_string(t.byte_offset) + " and the " + std::to_string(extent) +
                     " bytes the shape and strides span run past the end of the address space");
  }
  constexpr auto kMaxSpan = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (t.byte_offset > kMaxSpan || extent > kMaxSpan - t.byte_offset) {
    throw ValueError("from_dlpack: byte_offset " + std::to_string(t.byte_offset) + " plus the " + std::to_string(extent) +
                     " bytes the shape and strides span is 2^63 or more; expected them to stay below 2^63");
  }
  const std::uintptr_t first = address + static_cast<std::uintptr_t>(t.byte_offset);
  if (extent > 0 && first % elem != 0) {
    throw ValueError("from_dlpack: the first element (data + byte_offset " + std::to_string(t.byte_offset) +
                     ") is not aligned to the element size " + std::to_string(elem));
  }
  void* base = t.data == nullptr ? nullptr : reinterpret_cast<void*>(first);
  const Device device = from_dlpack_device(t.device);
  auto storage = std::make_shared<Storage>(base, extent, device, std::move(release));
  if (read_only) storage->set_read_only();
  try {
    return Tensor::from_storage(storage, shape, strides, 0, dtype);
  } catch (...) {
    disarm();
    throw;
  }
}

// The tensor `managed->dl_tensor` describes, owning `managed` once it exists (see from_dlpack).
template <typename Managed>
Tensor import_tensor(Managed* managed, bool read_only) {
  // Ownership passes to the storage only once the tensor exists, so that the caller still owns
  // `managed` after any refusal.
  auto owned = std::make_shared<Managed*>(managed);
  return view_dltensor(
      managed->dl_tensor, read_only,
      [owned](void*) {
        Managed* m = *owned;
        if (m != nullptr && m->deleter != nullptr) m->deleter(m);
      },
      [&owned] { *owned = nullptr; });
}

}  // namespace

Device from_dlpack_device(const DLDevice& d) {
  const std::int32_t code = device_type_code(d);
  const DeviceCode* entry = nullptr;
  for (const auto& e : kDeviceCodes) {
    if (static_cast<std::int32_t>(e.code) == code) entry = &e;
  }
  if (entry == nullptr) {
    throw TypeError("from_dlpack: unsupported DLPack device type " + std::to_string(code) +
                    "; expected CPU (1), CUDA (2) or ROCm (10)");
  }
  const DeviceType type = DeviceType::intern(entry->type);
  const std::string seen = std::string(entry->type) + ":" + std::to_string(d.device_id);
  if (d.device_id < 0) throw ValueError("from_dlpack: device " + seen + " has a negative index");
  if (type == DeviceType::cpu()) {
    if (d.device_id != 0) throw ValueError("from_dlpack: device " + seen + " does not exist; cpu has one device, 0");
    return Device::cpu();
  }
  if (find_device_runtime(type) == nullptr) load_backends();
  const int count = device_runtime(type).device_count();
  if (d.device_id >= count) {
    throw ValueError("from_dlpack: device " + seen + " does not exist; the process sees " + std::to_string(count) +
                     " " + entry->type + " device(s)");
  }
  return Device(type, d.device_id);
}

Tensor borrow_dlpack(const DLTensor& tensor, bool read_only) {
  return view_dltensor(tensor, read_only, Storage::Deleter(), [] {});
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw ValueError("from_dlpack: the DLManagedTensor pointer is null");
  return import_tensor(managed, false);
}

Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  if (managed == nullptr) throw ValueError("from_dlpack: the DLManagedTensorVersioned pointer is null");
  if (managed->version.major != kDLPackVersion.major) {
    throw ValueError("from_dlpack: DLManagedTensorVersioned of DLPack " + std::to_string(managed->version.major) + "." +
                     std::to_string(managed->version.minor) + ", expected major version " +
                     std::to_string(kDLPackVersion.major));
  }
  return import_tensor(managed, (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  // DLPack 0.x has no read-only flag: a consumer, or an import of it, would write the memory.
  if (tensor.defined() && tensor.storage() && tensor.storage()->read_only()) {
    throw TypeError("to_dlpack: the tensor is read-only, and DLPack 0.x cannot say so; export it with "
                    "to_dlpack_versioned, which carries the read-only flag, or copy it first");
  }
  return &export_context<DLManagedTensor>(tensor, "to_dlpack", false).release()->managed;
}

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor, DLPackVersion consumer_max, bool read_only) {
  if (consumer_max.major < kDLPackVersion.major) {
    throw TypeError("to_dlpack_versioned: the consumer reads DLPack up to " + std::to_string(consumer_max.major) + "." +
                    std::to_string(consumer_max.minor) + ", which has no DLManagedTensorVersioned; use to_dlpack");
  }
  auto ctx = export_context<DLManagedTensorVersioned>(tensor, "to_dlpack_versioned", true);
  ctx->managed.version = kDLPackVersion;
  const bool locked = read_only || (tensor.storage() && tensor.storage()->read_only());
  ctx->managed.flags = locked ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  return &ctx.release()->managed;
}

}  // namespace tileops
