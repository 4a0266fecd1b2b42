// What the standalone kernel harnesses share: a CUDA status check that ends the run with the
// failing step's name, and the timing of a launch (CUDA events around batches of launches).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace harness {

inline void cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median milliseconds per launch over 15 batches of 100 after 20 launches of warm-up;
// launch(i) is the i-th launch of the run, for harnesses that rotate their inputs.
inline double time_ms(const std::function<void(int)>& launch) {
  for (int i = 0; i < 20; ++i) launch(i);
  cuda(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  cuda(cudaEventCreate(&start), "event");
  cuda(cudaEventCreate(&stop), "event");
  std::vector<double> per;
  for (int rep = 0; rep < 15; ++rep) {
    cuda(cudaEventRecord(start), "record");
    for (int i = 0; i < 100; ++i) launch(rep * 100 + i);
    cuda(cudaEventRecord(stop), "record");
    cuda(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    cuda(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    per.push_back(ms / 100);
  }
  cuda(cudaGetLastError(), "launch");
  cuda(cudaEventDestroy(start), "event");
  cuda(cudaEventDestroy(stop), "event");
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

inline double time_ms(const std::function<void()>& launch) {
  return time_ms([&](int) { launch(); });
}

}  // namespace harness
