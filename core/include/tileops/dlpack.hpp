// Zero-copy exchange of tensors with other frameworks (PyTorch, JAX, CuPy, NumPy) through
// DLPack's DLManagedTensor.
#pragma once

#include "tileops/export.hpp"
#include "tileops/tensor.hpp"

struct DLManagedTensor;

namespace tileops {

// Wraps `managed` without copying. The returned tensor (and every view of it) keeps the
// producer's memory alive; `managed->deleter` runs once, when the last view is gone. On
// error (unsupported dtype or device, null data with elements, negative extents) throws
// TypeError/ValueError and leaves ownership with the caller: the deleter is not called.
TILEOPS_API Tensor from_dlpack(DLManagedTensor* managed);

// Exports `tensor` without copying. The caller owns the result and must call its deleter
// exactly once; until then the storage stays alive even if every Tensor handle is dropped.
// Throws TypeError for meta tensors and for device types DLPack has no code for.
TILEOPS_API DLManagedTensor* to_dlpack(const Tensor& tensor);

}  // namespace tileops
