#include "c_api/dlpack_refs.hpp"

#include <string>

#include "c_api/handles.hpp"
#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"

namespace tileops::c_api {
namespace {

// DLPack 0.8's code of bool, which Debian's DLPack 0.6 header does not name.
constexpr std::uint8_t kDLBoolCode = 6;

// `tensor` viewed with `dtype`, an element type of the same size.
Tensor reinterpret(const Tensor& tensor, DType dtype) {
  return Tensor::from_storage(tensor.storage(), tensor.shape(), tensor.strides(), tensor.offset(), dtype);
}

void check_flags(std::uint32_t flags, std::uint32_t allowed, const char* who) {
  if ((flags & ~allowed) != 0) {
    throw TypeError(std::string(who) + ": flags " + std::to_string(flags) + " hold bits other than " +
                    std::to_string(allowed) + ", the flags it takes");
  }
}

// `tensor` viewed as bool when `flags` says its uint8 elements hold bool.
Tensor apply_bool_flag(const Tensor& tensor, std::uint32_t flags, const char* who) {
  if ((flags & TILEOPS_DLPACK_UINT8_AS_BOOL) == 0) return tensor;
  if (tensor.dtype() != DType::uint8) {
    throw TypeError(std::string(who) + ": TILEOPS_DLPACK_UINT8_AS_BOOL is for uint8 tensors, not " +
                    std::string(dtype_name(tensor.dtype())));
  }
  return reinterpret(tensor, DType::bool_);
}

constexpr std::uint32_t kImportFlags = TILEOPS_DLPACK_UINT8_AS_BOOL | TILEOPS_DLPACK_READ_ONLY;

template <class Managed>
Tensor import_managed(Managed* managed, std::uint32_t flags, const char* who) {
  require_pointer(managed, who);
  Tensor tensor;
  try {
    check_flags(flags, kImportFlags, who);
    tensor = from_dlpack(managed);
  } catch (...) {
    if (managed->deleter != nullptr) managed->deleter(managed);
    throw;
  }
  if ((flags & TILEOPS_DLPACK_READ_ONLY) != 0 && tensor.storage()) tensor.storage()->set_read_only();
  return apply_bool_flag(tensor, flags, who);
}

Tensor borrow_lent(const DLTensor* lent, std::uint32_t flags) {
  check_flags(flags, kImportFlags, "DLTensor");
  return apply_bool_flag(borrow_dlpack(*lent, (flags & TILEOPS_DLPACK_READ_ONLY) != 0), flags, "DLTensor");
}

}  // namespace

Tensor import_dlpack(DLManagedTensor* managed, std::uint32_t flags) {
  return import_managed(managed, flags, "DLManagedTensor");
}

Tensor import_dlpack(DLManagedTensorVersioned* managed, std::uint32_t flags) {
  return import_managed(managed, flags, "DLManagedTensorVersioned");
}

DLManagedTensor* export_dlpack(const Tensor& tensor, std::uint32_t flags) {
  check_flags(flags, TILEOPS_DLPACK_LEGACY_BOOL, "to_dlpack");
  const bool bool_code = (flags & TILEOPS_DLPACK_LEGACY_BOOL) != 0 && tensor.defined() && tensor.dtype() == DType::bool_ &&
                         !tensor.device().is_meta();
  if (!bool_code) return to_dlpack(tensor);
  DLManagedTensor* managed = to_dlpack(reinterpret(tensor, DType::uint8));
  managed->dl_tensor.dtype.code = kDLBoolCode;
  return managed;
}

DLManagedTensorVersioned* export_dlpack_versioned(const Tensor& tensor, DLPackVersion consumer_max, std::uint32_t flags) {
  check_flags(flags, TILEOPS_DLPACK_READ_ONLY, "to_dlpack_versioned");
  return to_dlpack_versioned(tensor, consumer_max, (flags & TILEOPS_DLPACK_READ_ONLY) != 0);
}

Tensor resolve_ref(const tileops_tensor_ref& ref, const char* what) {
  switch (ref.kind) {
    case TILEOPS_REF_NONE:
      return {};
    case TILEOPS_REF_TENSOR:
      require_pointer(ref.ptr, what);
      return static_cast<const tileops_tensor*>(ref.ptr)->tensor;
    case TILEOPS_REF_DLPACK:
      require_pointer(ref.ptr, what);
      return import_dlpack(static_cast<DLManagedTensor*>(ref.ptr), ref.flags);
    case TILEOPS_REF_DLPACK_VERSIONED:
      require_pointer(ref.ptr, what);
      return import_dlpack(static_cast<DLManagedTensorVersioned*>(ref.ptr), ref.flags);
    case TILEOPS_REF_DLTENSOR:
      require_pointer(ref.ptr, what);
      return borrow_lent(static_cast<const DLTensor*>(ref.ptr), ref.flags);
    default:
      throw TypeError(std::string(what) + ": ref kind " + std::to_string(ref.kind) +
                      " is none of TILEOPS_REF_NONE (0), _TENSOR (1), _DLPACK (2), _DLPACK_VERSIONED (3), _DLTENSOR (4)");
  }
}

void release_ref(const tileops_tensor_ref& ref) noexcept {
  if (ref.ptr == nullptr) return;
  if (ref.kind == TILEOPS_REF_DLPACK) {
    auto* managed = static_cast<DLManagedTensor*>(ref.ptr);
    if (managed->deleter != nullptr) managed->deleter(managed);
  } else if (ref.kind == TILEOPS_REF_DLPACK_VERSIONED) {
    auto* managed = static_cast<DLManagedTensorVersioned*>(ref.ptr);
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
}

void fill_ref(tileops_tensor_ref& ref, const Tensor& tensor) {
  ref.ptr = nullptr;
  switch (ref.kind) {
    case TILEOPS_REF_NONE:
      return;
    case TILEOPS_REF_TENSOR:
      if (tensor.defined()) ref.ptr = new_tensor_handle(tensor);
      return;
    case TILEOPS_REF_DLPACK:
      if (tensor.defined()) ref.ptr = export_dlpack(tensor, ref.flags);
      return;
    case TILEOPS_REF_DLPACK_VERSIONED:
      if (tensor.defined()) ref.ptr = export_dlpack_versioned(tensor, kDLPackVersion, ref.flags);
      return;
    default:
      throw TypeError("output ref kind " + std::to_string(ref.kind) +
                      " is none of TILEOPS_REF_NONE (0), _TENSOR (1), _DLPACK (2), _DLPACK_VERSIONED (3)");
  }
}

void clear_filled_ref(tileops_tensor_ref& ref) noexcept {
  if (ref.kind == TILEOPS_REF_TENSOR) {
    delete static_cast<tileops_tensor*>(ref.ptr);
  } else {
    release_ref(ref);
  }
  ref.ptr = nullptr;
}

}  // namespace tileops::c_api
