// Opens and closes the region of an isa_*.cpp file whose functions (lambdas and template
// instantiations included) are compiled for one instruction set. GCC spells this with its
// target pragma; clang has none and applies the target attribute to every function of the
// region instead. The feature lists are kept in one place here.
#pragma once

#if defined(__clang__)
#define TILEOPS_ISA_REGION_AVX2 \
  _Pragma("clang attribute push(__attribute__((target(\"avx2,fma,f16c\"))), apply_to = function)")
#define TILEOPS_ISA_REGION_AVX512 \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c\"))), apply_to = function)")
#define TILEOPS_ISA_REGION_AMX \
  _Pragma("clang attribute push(__attribute__((target(\"amx-tile,amx-bf16,avx512bf16,avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c\"))), apply_to = function)")
#define TILEOPS_ISA_REGION_END _Pragma("clang attribute pop")
#else
#define TILEOPS_ISA_REGION_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma,f16c\")")
#define TILEOPS_ISA_REGION_AVX512 \
  _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c\")")
#define TILEOPS_ISA_REGION_AMX \
  _Pragma("GCC push_options") \
  _Pragma("GCC target(\"amx-tile,amx-bf16,avx512bf16,avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c\")")
#define TILEOPS_ISA_REGION_END _Pragma("GCC pop_options")
#endif
