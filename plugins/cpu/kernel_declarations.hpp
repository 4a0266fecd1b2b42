// The dispatch declarations every cpu plugin kernel shares: the kernels derive
// ops::<Op>::<interface>::Impl<CpuKernel> (or <CpuFloatKernel>) and add only their own.
#pragma once

#include "tileops/extend/kernel.hpp"

namespace tileops::cpu {

struct CpuKernel : Kernel {
  static constexpr DeviceTypes devices{"cpu"};
};

// A cpu kernel computing float32, float16 and bfloat16 only.
using CpuFloatKernel = FloatOnly<CpuKernel>;

}  // namespace tileops::cpu
