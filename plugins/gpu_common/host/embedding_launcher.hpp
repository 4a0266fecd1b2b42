// The host-side interface of the shared embedding kernel (../kernels/embedding.cu), with the
// rules of launchers.hpp.
#pragma once

#include <cstdint>

#include "fault_record.hpp"
#include "tileops/dtype.hpp"

namespace tileops::gpu {

// y[i, :] = weight[ids[i], :], bitwise, for the `count` contiguous ids (int32 or int64); weight
// contiguous [vocab, row_bytes / element size], y contiguous [count, same]. row_bytes is a
// multiple of 2 (16-bit or 32-bit elements). An id outside [0, vocab) is recorded in `faults`
// and its row of y is zero; the weight is never read outside its rows.
struct EmbeddingArgs {
  const void* ids;
  DType index_dtype;
  const void* weight;
  void* y;
  std::int64_t count, vocab, row_bytes;
  FaultRecord* faults;
};
void launch_embedding(const EmbeddingArgs& args, void* stream);

}  // namespace tileops::gpu
