// Zero-copy exchange of tensors with other frameworks (PyTorch, JAX, CuPy, NumPy) through
// DLPack's DLManagedTensor.
#pragma once

#include "tileops/export.hpp"
#include "tileops/tensor.hpp"

struct DLManagedTensor;

namespace tileops {

// Wraps `managed` (DLPack 0.6's unversioned DLManagedTensor) without copying. The returned
// tensor (and every view of it) keeps the producer's memory alive; `managed->deleter` (when
// not null) runs once, when the last view is gone. Accepted: dtypes bool, int8, uint8, int32,
// int64, float16, bfloat16, float32, float64 with one lane; devices cpu:0 and, for CUDA and
// ROCm, an index below the device count of the registered runtime (loading the backends
// first when none is); ndim 0 to 64; non-negative extents and strides (null strides: compact
// row-major); a first element aligned to the element size, and a byte range that stays in the
// address space. Any other tensor (null shape with ndim > 0, an unknown device type value,
// cpu:-1 or cpu:7, negative strides, extents x strides past 2^63, an overflowing byte_offset)
// throws TypeError/ValueError, or OpNotAvailableError for a device type no plugin provides,
// and leaves ownership with the caller: the deleter is not called.
TILEOPS_API Tensor from_dlpack(DLManagedTensor* managed);

// Exports `tensor` without copying. The caller owns the result and must call its deleter
// exactly once; until then the storage stays alive even if every Tensor handle is dropped.
// Throws TypeError for meta tensors and for device types DLPack has no code for.
TILEOPS_API DLManagedTensor* to_dlpack(const Tensor& tensor);

}  // namespace tileops
