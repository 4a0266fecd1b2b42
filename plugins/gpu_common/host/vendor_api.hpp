// The GPU runtime API under one set of names for the host code shared by the cuda and rocm
// plugins: the CUDA runtime when compiled for cuda, HIP's (same calls, `hip` prefix) when
// TILEOPS_GPU_HIP is defined. Only what the shared runtime and launchers use is mapped, and
// the few places where the two APIs differ (facts_of) are spelled out here.
#pragma once

#include <string>

#if defined(TILEOPS_GPU_HIP)
#include <hip/hip_runtime_api.h>

#include "gfx_arch.hpp"
#else
#include <cuda_runtime_api.h>
#endif

#include "tileops/extend/device_runtime.hpp"
#include "vendor.hpp"

namespace tileops::gpu::api {

inline constexpr const char* kVendor = kDeviceType;

#if defined(TILEOPS_GPU_HIP)
using Error = hipError_t;
using Stream = hipStream_t;
using MemPool = hipMemPool_t;
using DeviceProp = hipDeviceProp_t;
inline constexpr Error kSuccess = hipSuccess;
inline constexpr Error kOutOfMemory = hipErrorOutOfMemory;
inline constexpr Error kNoDevice = hipErrorNoDevice;
inline const char* error_name(Error e) { return hipGetErrorName(e); }
inline const char* error_string(Error e) { return hipGetErrorString(e); }
inline Error get_last_error() { return hipGetLastError(); }
inline Error device_count(int* n) { return hipGetDeviceCount(n); }
inline Error get_device(int* d) { return hipGetDevice(d); }
inline Error set_device(int d) { return hipSetDevice(d); }
inline Error properties(DeviceProp* p, int d) { return hipGetDeviceProperties(p, d); }
inline Error default_pool(MemPool* pool, int d) { return hipDeviceGetDefaultMemPool(pool, d); }
inline Error host_alloc_mapped(void** p, size_t n) { return hipHostMalloc(p, n, hipHostMallocMapped); }
inline Error device_pointer_of_host(void** device, void* host) { return hipHostGetDevicePointer(device, host, 0); }
inline Error keep_pool_memory(MemPool pool) {
  unsigned long long keep = ~0ull;
  return hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep);
}
inline Error malloc_from_pool(void** p, size_t n, MemPool pool, Stream s) {
  return hipMallocFromPoolAsync(p, n, pool, s);
}
inline Error free_async(void* p, Stream s) { return hipFreeAsync(p, s); }
inline Error copy_to_host(void* d, const void* s, size_t n, Stream st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyDeviceToHost, st);
}
inline Error copy_from_host(void* d, const void* s, size_t n, Stream st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyHostToDevice, st);
}
inline Error copy_on_device(void* d, const void* s, size_t n, Stream st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyDeviceToDevice, st);
}
inline Error copy_peer(void* d, int dd, const void* s, int sd, size_t n, Stream st) {
  return hipMemcpyPeerAsync(d, dd, s, sd, n, st);
}
inline Error stream_synchronize(Stream s) { return hipStreamSynchronize(s); }
inline Error device_synchronize() { return hipDeviceSynchronize(); }
// arch: the gfx processor number (gfx_arch.hpp). HIP 5.2 has no opt-in shared memory limit:
// a block gets sharedMemPerBlock bytes of LDS (64 KiB on CDNA).
inline DeviceFacts facts_of(const DeviceProp& p) {
  DeviceFacts f;
  f.arch = gfx_arch_number(p.gcnArchName);
  f.name = std::string(p.name) + " (" + p.gcnArchName + ")";
  f.sm_count = p.multiProcessorCount;
  f.smem_budget = p.sharedMemPerBlock;
  return f;
}
inline Error memset_async(void* p, int value, size_t n, Stream s) { return hipMemsetAsync(p, value, n, s); }
inline Error create_stream(Stream* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }

using Graph = hipGraph_t;
using GraphExec = hipGraphExec_t;
inline constexpr Error kCaptureImplicit = hipErrorStreamCaptureImplicit;
inline Error begin_capture(Stream s) { return hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal); }
inline Error end_capture(Stream s, Graph* g) { return hipStreamEndCapture(s, g); }
inline Error is_capturing(Stream s, bool* capturing) {
  hipStreamCaptureStatus status{};
  const Error e = hipStreamIsCapturing(s, &status);
  *capturing = status != hipStreamCaptureStatusNone;
  return e;
}
inline Error instantiate(GraphExec* exec, Graph g) {
  return hipGraphInstantiateWithFlags(exec, g, hipGraphInstantiateFlagAutoFreeOnLaunch);
}
inline Error destroy_graph(Graph g) { return hipGraphDestroy(g); }
inline Error launch_graph(GraphExec exec, Stream s) { return hipGraphLaunch(exec, s); }
inline Error destroy_graph_exec(GraphExec exec) { return hipGraphExecDestroy(exec); }
#else
using Error = cudaError_t;
using Stream = cudaStream_t;
using MemPool = cudaMemPool_t;
using DeviceProp = cudaDeviceProp;
inline constexpr Error kSuccess = cudaSuccess;
inline constexpr Error kOutOfMemory = cudaErrorMemoryAllocation;
inline constexpr Error kNoDevice = cudaErrorNoDevice;
inline const char* error_name(Error e) { return cudaGetErrorName(e); }
inline const char* error_string(Error e) { return cudaGetErrorString(e); }
inline Error get_last_error() { return cudaGetLastError(); }
inline Error device_count(int* n) { return cudaGetDeviceCount(n); }
inline Error get_device(int* d) { return cudaGetDevice(d); }
inline Error set_device(int d) { return cudaSetDevice(d); }
inline Error properties(DeviceProp* p, int d) { return cudaGetDeviceProperties(p, d); }
inline Error default_pool(MemPool* pool, int d) { return cudaDeviceGetDefaultMemPool(pool, d); }
inline Error host_alloc_mapped(void** p, size_t n) { return cudaHostAlloc(p, n, cudaHostAllocMapped); }
inline Error device_pointer_of_host(void** device, void* host) { return cudaHostGetDevicePointer(device, host, 0); }
inline Error keep_pool_memory(MemPool pool) {
  unsigned long long keep = ~0ull;
  return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
}
inline Error malloc_from_pool(void** p, size_t n, MemPool pool, Stream s) {
  return cudaMallocFromPoolAsync(p, n, pool, s);
}
inline Error free_async(void* p, Stream s) { return cudaFreeAsync(p, s); }
inline Error copy_to_host(void* d, const void* s, size_t n, Stream st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToHost, st);
}
inline Error copy_from_host(void* d, const void* s, size_t n, Stream st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyHostToDevice, st);
}
inline Error copy_on_device(void* d, const void* s, size_t n, Stream st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st);
}
inline Error copy_peer(void* d, int dd, const void* s, int sd, size_t n, Stream st) {
  return cudaMemcpyPeerAsync(d, dd, s, sd, n, st);
}
inline Error stream_synchronize(Stream s) { return cudaStreamSynchronize(s); }
inline Error device_synchronize() { return cudaDeviceSynchronize(); }
// arch: the compute capability as major * 10 + minor (90 for sm_90).
inline DeviceFacts facts_of(const DeviceProp& p) {
  DeviceFacts f;
  f.arch = p.major * 10 + p.minor;
  f.name = p.name;
  f.sm_count = p.multiProcessorCount;
  f.smem_budget = p.sharedMemPerBlockOptin != 0 ? p.sharedMemPerBlockOptin : p.sharedMemPerBlock;
  return f;
}
inline Error memset_async(void* p, int value, size_t n, Stream s) { return cudaMemsetAsync(p, value, n, s); }
inline Error create_stream(Stream* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }

using Graph = cudaGraph_t;
using GraphExec = cudaGraphExec_t;
inline constexpr Error kCaptureImplicit = cudaErrorStreamCaptureImplicit;
// Thread-local mode: calls that are not allowed while recording break the recording when this
// thread makes them; other threads of the application are unaffected.
inline Error begin_capture(Stream s) { return cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); }
inline Error end_capture(Stream s, Graph* g) { return cudaStreamEndCapture(s, g); }
inline Error is_capturing(Stream s, bool* capturing) {
  cudaStreamCaptureStatus status{};
  const Error e = cudaStreamIsCapturing(s, &status);
  *capturing = status != cudaStreamCaptureStatusNone;
  return e;
}
inline Error instantiate(GraphExec* exec, Graph g) {
  return cudaGraphInstantiateWithFlags(exec, g, cudaGraphInstantiateFlagAutoFreeOnLaunch);
}
inline Error destroy_graph(Graph g) { return cudaGraphDestroy(g); }
inline Error launch_graph(GraphExec exec, Stream s) { return cudaGraphLaunch(exec, s); }
inline Error destroy_graph_exec(GraphExec exec) { return cudaGraphExecDestroy(exec); }
#endif

// Resets the calling thread's last error once a failure has been handled (HIP declares its
// status type nodiscard).
inline void clear_last_error() { static_cast<void>(get_last_error()); }

}  // namespace tileops::gpu::api
