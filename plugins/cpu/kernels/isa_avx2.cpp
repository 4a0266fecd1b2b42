// The kernels compiled for AVX2 with FMA and F16C. Every function between the pragmas is compiled
// for that target and has internal linkage, so none of it can be picked by the linker for code that
// runs on a CPU without it; the standard headers come first so that their inline functions keep
// the default target.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "kernel_table.hpp"
#include "tileops/half.hpp"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#include "simd/avx2.hpp"
// The kernels, built on the vector types above.
#include "impl/table.hpp"

namespace tileops::cpu {
namespace {
constexpr KernelTable kTable = table_for(Isa::avx2);
}  // namespace
}  // namespace tileops::cpu
#pragma GCC pop_options

namespace tileops::cpu {
const KernelTable& avx2_kernels() { return kTable; }
}  // namespace tileops::cpu
