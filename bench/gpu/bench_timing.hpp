// What the GPU benchmarks share: CUDA events around batches of calls on the default stream,
// after a warm-up, reported as the median milliseconds per call of 15 batches; and this run's
// device-to-device copy bandwidth, the yardstick of memory-bound rows, at 2 GiB and at an op's size.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace tileops::bench {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds per call of `call(i)` (i picks the input copy among `copies`). A batch
// holds enough calls for about 2 ms of work, at most 200.
inline double time_calls(const std::function<void(int)>& call, int copies) {
  for (int i = 0; i < 10; ++i) call(i % copies);
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  check(cudaEventRecord(start), "record");
  call(0);
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "sync");
  float one = 0;
  check(cudaEventElapsedTime(&one, start, stop), "elapsed");
  const int batch = std::clamp(static_cast<int>(2.0 / std::max(one, 1e-3f)), 1, 200);
  std::vector<double> per_call;
  for (int rep = 0; rep < 15; ++rep) {
    check(cudaEventRecord(start), "record");
    for (int i = 0; i < batch; ++i) call((rep * batch + i) % copies);
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    per_call.push_back(ms / batch);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(per_call);
}

// Bytes read plus bytes written per second by cudaMemcpy moving `moved` bytes in all (half of it
// read, half written), timed as an op is: rotated among `copies` source and destination pairs, so
// that a size the L2 cache holds is measured as the op of that size is.
inline double copy_bandwidth_gbps(std::size_t moved, int copies) {
  const std::size_t bytes = moved / 2;
  std::vector<void*> src(static_cast<std::size_t>(copies)), dst(static_cast<std::size_t>(copies));
  for (int i = 0; i < copies; ++i) {
    check(cudaMalloc(&src[static_cast<std::size_t>(i)], bytes), "cudaMalloc");
    check(cudaMalloc(&dst[static_cast<std::size_t>(i)], bytes), "cudaMalloc");
    check(cudaMemset(src[static_cast<std::size_t>(i)], 1, bytes), "memset");
  }
  const double ms = time_calls(
      [&](int i) {
        const auto k = static_cast<std::size_t>(i);
        check(cudaMemcpyAsync(dst[k], src[k], bytes, cudaMemcpyDeviceToDevice), "copy");
      },
      copies);
  for (int i = 0; i < copies; ++i) {
    cudaFree(src[static_cast<std::size_t>(i)]);
    cudaFree(dst[static_cast<std::size_t>(i)]);
  }
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

// Bytes read plus bytes written per second by a 1 GiB cudaMemcpy on the device.
inline double copy_bandwidth_gbps() { return copy_bandwidth_gbps(std::size_t{1} << 31, 1); }
}  // namespace tileops::bench
