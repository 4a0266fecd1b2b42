// Small helpers the GPU kernel classes share on their call path.
#pragma once

#include "gpu_runtime.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/tensor.hpp"

namespace tileops::gpu {

// The calling thread's current stream of the tensor's device.
inline void* stream_of(const Tensor& t) { return runtime()->current_stream(t.device().index()); }

inline const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// Rows of `n` elements in a tensor of `numel` elements (0 when n is 0).
inline std::int64_t rows_of(const Tensor& t, std::int64_t n) { return n == 0 ? 0 : t.numel() / n; }

// The index of the call's device; a call without one is for device 0.
inline int device_index_of(const CallSpec& call) { return call.device ? call.device->index() : 0; }

// The fault record of the call's device (GpuRuntime::fault_record): where the kernels that read
// indices from device memory report one out of range.
inline FaultRecord* faults_of(const CallSpec& call) { return runtime()->fault_record(device_index_of(call)); }

// The multiprocessor count of the call's device, read when an entry is built.
inline int sm_count_of(const CallSpec& call) { return runtime()->facts(device_index_of(call)).sm_count; }

// The warp width of the call's device (GpuRuntime::warp_size), read when an entry is built: the
// launch geometry of the kernels whose blocks are a number of warps.
inline int warp_size_of(const CallSpec& call) { return runtime()->warp_size(device_index_of(call)); }

}  // namespace tileops::gpu
