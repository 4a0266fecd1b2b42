// The warp helpers of the GPU kernels (plugins/gpu_common/device/portability.hpp) run on a CUDA
// device at a chosen width: the warp's own (32) or a sub-warp width, which splits each warp
// into groups that exchange among themselves only, as the helpers do for a width other than
// the target's.
#pragma once

#include <vector>

namespace tileops::testing {

// What each thread of one block got from the helpers, indexed by thread.
struct WarpHelperResults {
  std::vector<float> sum;        // warp_reduce with Add over the thread's group
  std::vector<float> max;        // warp_reduce with Max over the thread's group
  std::vector<int> reversed;     // shuffle_xor(thread, width - 1): the mirror lane's thread
  std::vector<int> last_lane;    // shuffle_from(thread, width - 1): the group's last thread
  std::vector<float> block_sum;  // block_reduce with Add over the block
};

// Runs the helpers with width 32 or 16 (anything else throws ValueError) over one block of
// values.size() threads, thread t holding values[t], on the current CUDA device: a multiple of
// 32 threads, at most 256. Throws RuntimeError naming the CUDA error of a failed call.
WarpHelperResults run_warp_helpers(int width, const std::vector<float>& values);

}  // namespace tileops::testing
