// The launcher of the tensor-core decode GEMM kernel (kernels/mma_dot_rows.cu).
#pragma once

#include "launchers.hpp"

namespace tileops::cuda {

// d[i, j] = sum_p a[i, p] * b[j, p], accumulated in float32, for contiguous a [m, k], b [n, k]
// and d [m, n] on `stream`. Requires: dtype float16 or bfloat16, 1 <= m <= kMaxDotRows (m = 0
// or n = 0 launches nothing), k a multiple of 8, a and b 16-byte aligned, and a device of
// compute capability 8.0 or later. Throws TypeError for another dtype and RuntimeError when
// the launch fails.
void launch_mma_dot_rows(const gpu::DotRowsArgs& args, void* stream);

}  // namespace tileops::cuda
