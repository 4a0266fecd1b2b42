// The kernels compiled for AVX-512 (F, BW, VL, DQ). Every function between the pragmas is compiled
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

// GCC 12 flags the self-initialised "undefined" registers inside avx512fintrin.h's reductions
// and conversions as uninitialized; they are undefined by design.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#include "simd/avx512.hpp"
// The kernels, built on the vector types above.
#include "impl/table.hpp"

namespace tileops::cpu {
namespace {
constexpr KernelTable kTable = table_for(Isa::avx512);
}  // namespace
}  // namespace tileops::cpu
#pragma GCC pop_options

namespace tileops::cpu {
const KernelTable& avx512_kernels() { return kTable; }
}  // namespace tileops::cpu
