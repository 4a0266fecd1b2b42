// The kernels compiled for AVX-512 (F, BW, VL, DQ). Every function in the target region
// (isa_region.hpp) is compiled for that instruction set and has internal linkage, so none of it
// can be picked by the linker for code that runs on a CPU without it; the standard headers come
// first so that their inline functions keep the default target.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "isa_region.hpp"
#include "kernel_table.hpp"
#include "tileops/half.hpp"

// GCC 12 flags the self-initialised "undefined" registers inside avx512fintrin.h's reductions
// and conversions as uninitialized; they are undefined by design.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TILEOPS_ISA_REGION_AVX512
#include "simd/avx512.hpp"
// The kernels, built on the vector types above.
#include "impl/table.hpp"

namespace tileops::cpu {
namespace {
constexpr KernelTable kTable = table_for(Isa::avx512);
}  // namespace
}  // namespace tileops::cpu
TILEOPS_ISA_REGION_END

namespace tileops::cpu {
const KernelTable& avx512_kernels() { return kTable; }
}  // namespace tileops::cpu
