// The kernels for CPUs with AMX: the avx512 table, with the bfloat16 attention prefill on tile
// multiply-adds (impl/attention_amx.hpp). The functions in the target region (isa_region.hpp)
// are compiled for AVX-512 with AMX and have internal linkage, as in isa_avx512.cpp.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "isa_region.hpp"
#include "kernel_table.hpp"
#include "tileops/half.hpp"

#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
TILEOPS_ISA_REGION_AMX
#include "simd/avx512.hpp"
#include "impl/attention_amx.hpp"

namespace tileops::cpu {
namespace {

void attention_pack_amx_kernel(DType dtype, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t block0,
                               int64_t block1, float* kt, float* v) {
  if (dtype == DType::bfloat16) attention_pack_amx(args, b, kvh, block0, block1, kt, v);
  else attention_pack_kernel(dtype, args, b, kvh, block0, block1, kt, v);
}

void attention_rows_amx_kernel(DType dtype, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t i0, int64_t i1,
                               const float* kt, const float* v, float* scratch) {
  if (dtype == DType::bfloat16) attention_rows_amx(args, b, kvh, i0, i1, kt, v, scratch);
  else attention_rows_kernel(dtype, args, b, kvh, i0, i1, kt, v, scratch);
}

}  // namespace
}  // namespace tileops::cpu
TILEOPS_ISA_REGION_END

namespace tileops::cpu {
const KernelTable& amx_kernels() {
  static const KernelTable table = [] {
    KernelTable t = avx512_kernels();
    t.isa = Isa::amx;
    t.attention_pack = &attention_pack_amx_kernel;
    t.attention_rows = &attention_rows_amx_kernel;
    t.attention_decode_part = &attention_decode_part_kernel;
    return t;
  }();
  return table;
}
}  // namespace tileops::cpu
