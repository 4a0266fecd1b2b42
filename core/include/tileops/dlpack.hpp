// Zero-copy exchange of tensors with other frameworks (PyTorch, JAX, CuPy, NumPy) through
// DLPack: the legacy DLManagedTensor of DLPack 0.x and DLPack 1.x's DLManagedTensorVersioned.
//
// Dtypes (one lane each), both ways unless noted:
//   bool      kDLBool (6), 8 bits   imported from either struct; exported only as versioned:
//                                    DLPack before 0.8 has no bool code, so to_dlpack refuses it
//   int8      kDLInt (0), 8 bits     int32 kDLInt, 32 bits     int64 kDLInt, 64 bits
//   uint8     kDLUInt (1), 8 bits
//   float16   kDLFloat (2), 16 bits  float32 kDLFloat, 32 bits float64 kDLFloat, 64 bits
//   bfloat16  kDLBfloat (4), 16 bits
// Devices: kDLCPU (1) ↔ cpu, kDLCUDA (2) ↔ cuda, kDLROCM (10) ↔ hip.
#pragma once

#include <cstdint>

#include "tileops/dlpack_versioned.h"
#include "tileops/export.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

// The DLPack version to_dlpack_versioned writes and from_dlpack(DLManagedTensorVersioned*)
// reads: 1.0 (a producer's 1.x with a higher minor is read too; minors only add fields after
// dl_tensor or flag bits).
inline constexpr DLPackVersion kDLPackVersion{1, 0};

// Wraps `managed` (DLPack 0.x's unversioned DLManagedTensor) without copying. The returned
// tensor (and every view of it) keeps the producer's memory alive; `managed->deleter` (when
// not null) runs once, when the last view is gone. The first element is at data + byte_offset:
// producers that point data at it with byte_offset 0 (PyTorch, CuPy) and producers that keep
// data at the allocation and put the view's start in byte_offset are both read. Accepted:
// the dtypes of the table above; devices cpu:0 and, for CUDA and ROCm, an index below the
// device count of the registered runtime (loading the backends first when none is); ndim 0
// to 64; non-negative extents and strides (null strides: compact row-major); a first element
// aligned to the element size, and a byte range that stays in the address space. Any other
// tensor (null shape with ndim > 0, an unknown device type value, cpu:-1 or cpu:7, negative
// strides, extents x strides past 2^63, an overflowing byte_offset) throws
// TypeError/ValueError, or OpNotAvailableError for a device type no plugin provides, and
// leaves ownership with the caller: the deleter is not called.
TILEOPS_API Tensor from_dlpack(DLManagedTensor* managed);

// The same for DLPack 1.x. `managed->version.major` must be 1 (else ValueError naming the
// version seen, ownership left with the caller). With DLPACK_FLAG_BITMASK_READ_ONLY set the
// memory is read-only (Storage::read_only()): every op call that would write it (a mutated
// input, an `out` buffer) throws ValueError, and so do Tensor::set, fill and copy_from.
TILEOPS_API Tensor from_dlpack(DLManagedTensorVersioned* managed);

// A tensor viewing the memory a plain DLTensor describes, owned by nobody: the caller keeps
// that memory alive for as long as the returned tensor or any view of it is in use, and
// nothing frees it. Checked as from_dlpack checks an import (same errors); with `read_only`
// the view is read-only as a DLPACK_FLAG_BITMASK_READ_ONLY import is. For memory lent for the
// span of one call (the C API's TILEOPS_REF_DLTENSOR), where an import's ownership
// bookkeeping costs more than the call.
TILEOPS_API Tensor borrow_dlpack(const DLTensor& tensor, bool read_only = false);

// The tileops device of a DLPack device, checked as from_dlpack checks an import's: kDLCPU
// index 0, kDLCUDA or kDLROCM below the registered runtime's device count (loading the
// backends first when no runtime is registered). Throws TypeError for another device type,
// ValueError for an index that does not exist, OpNotAvailableError for a device type no plugin
// provides.
TILEOPS_API Device from_dlpack_device(const DLDevice& device);

// Exports `tensor` without copying as a DLPack 0.x DLManagedTensor: `data` is the address of
// the first element and `byte_offset` is 0, as PyTorch and CuPy export (some consumers, Debian's
// libtorch 1.13 among them, ignore byte_offset). The caller owns the result and must call its
// deleter exactly once; until then the storage stays alive even if every Tensor handle is
// dropped. Throws TypeError for meta tensors, for device types DLPack has no code for, for
// bool tensors (no DLPack 0.x code; use to_dlpack_versioned, or convert to uint8) and for
// read-only tensors (DLPack 0.x has no read-only flag; to_dlpack_versioned carries it).
TILEOPS_API DLManagedTensor* to_dlpack(const Tensor& tensor);

// Version negotiation and export as DLPack 1.x: `consumer_max` is the newest version the
// consumer reads. A consumer of major 1 or later gets a DLManagedTensorVersioned of version
// kDLPackVersion; one below 1 reads only the legacy struct, so TypeError tells it to use
// to_dlpack. The tensor is laid out as to_dlpack does; `flags` carries
// DLPACK_FLAG_BITMASK_READ_ONLY when `read_only` is true or the tensor's storage is read-only.
// Ownership and errors as to_dlpack, except that bool is exported as kDLBool.
TILEOPS_API DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor, DLPackVersion consumer_max = kDLPackVersion,
                                                          bool read_only = false);

}  // namespace tileops
