// The stream tileops queues device work on. Each thread has, per device, a current stream:
// the device's default stream until a StreamGuard makes another current. Every kernel a
// plugin launches for a call on that device, every output it allocates and every copy to or
// from the host goes to that stream, so an application can make tileops work on its own
// stream (as PyTorch code does with torch.cuda.stream or CUDAStreamGuard):
//
//   cudaStream_t s = ...;                         // or torch.cuda.current_stream().cuda_stream
//   {
//     tileops::StreamGuard on_s(tileops::Device::parse("cuda:0"), s);
//     y = op(x);                                  // launched on s, returns without waiting
//   }                                             // the previous stream is current again
#pragma once

#include "tileops/device.hpp"
#include "tileops/export.hpp"

namespace tileops {

// The calling thread's current stream of `device` as a native handle (cudaStream_t,
// hipStream_t); nullptr is the default stream, and the only stream of devices without streams
// (cpu, meta). Throws OpNotAvailableError when no runtime is registered for the device type.
TILEOPS_API void* current_stream(const Device& device);

// Makes `stream` the calling thread's current stream of `device` for the guard's lifetime,
// then restores the stream that was current before. `stream` must belong to `device` and must
// outlive every tensor allocated while it is current (their memory is released in its order).
// Throws ValueError for a non-null stream on a device type without streams, or a device index
// the runtime does not have. Guards nest; destroy them in reverse order, on the same thread.
class TILEOPS_API StreamGuard {
 public:
  StreamGuard(const Device& device, void* stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

  const Device& device() const { return device_; }
  // The stream this guard made current, and the one it restores.
  void* stream() const { return stream_; }
  void* previous() const { return previous_; }

 private:
  Device device_;
  void* stream_;
  void* previous_;
};

}  // namespace tileops
