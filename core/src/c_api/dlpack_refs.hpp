// DLPack as the C API takes and gives it: imports that always take ownership, the bool flags,
// and tensor refs (tileops_tensor_ref) resolved to tensors and filled from them.
#pragma once

#include <cstdint>

#include "tileops/c_api.h"
#include "tileops/tensor.hpp"

namespace tileops::c_api {

// from_dlpack with the C API's ownership rule: when the import fails, `managed`'s deleter runs
// before the exception leaves. `flags` may hold TILEOPS_DLPACK_UINT8_AS_BOOL (TypeError for a
// tensor that is not uint8) and TILEOPS_DLPACK_READ_ONLY (the import's memory is never
// written); other bits are a TypeError.
Tensor import_dlpack(DLManagedTensor* managed, std::uint32_t flags);
Tensor import_dlpack(DLManagedTensorVersioned* managed, std::uint32_t flags);

// to_dlpack; `flags` may hold TILEOPS_DLPACK_LEGACY_BOOL.
DLManagedTensor* export_dlpack(const Tensor& tensor, std::uint32_t flags);
// to_dlpack_versioned for a consumer of DLPack up to `consumer_max`; `flags` may hold
// TILEOPS_DLPACK_READ_ONLY.
DLManagedTensorVersioned* export_dlpack_versioned(const Tensor& tensor, DLPackVersion consumer_max, std::uint32_t flags);

// The tensor `ref` stands for: undefined for TILEOPS_REF_NONE, the handle's tensor, the
// import of a DLPack ref (taking its ownership), or a view of a lent DLTensor that owns
// nothing (borrow_dlpack). Throws TypeError naming `what` for an unknown kind, a NULL ptr or
// flags the kind does not take.
Tensor resolve_ref(const tileops_tensor_ref& ref, const char* what);

// Releases what a DLPack ref owns without importing it: its deleter runs (when not NULL).
// Other kinds and NULL ptrs are left alone. Never throws.
void release_ref(const tileops_tensor_ref& ref) noexcept;

// Sets ref.ptr to `tensor` in the form ref.kind asks for (TILEOPS_REF_TENSOR: a new handle;
// DLPACK / DLPACK_VERSIONED: an export owned by the caller; NONE: nothing), NULL for an
// undefined tensor. Throws TypeError for an unknown kind, and what the export throws.
void fill_ref(tileops_tensor_ref& ref, const Tensor& tensor);

// Releases what fill_ref put in `ref` (a handle, an export's deleter) and sets ptr to NULL.
void clear_filled_ref(tileops_tensor_ref& ref) noexcept;

}  // namespace tileops::c_api
