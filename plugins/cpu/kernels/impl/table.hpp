// The kernel table of the instruction set whose region includes this header.
#pragma once

#include "impl/activation.hpp"
#include "impl/attention.hpp"
#include "impl/batch_norm.hpp"
#include "impl/convert.hpp"
#include "impl/dot_rows.hpp"
#include "impl/elementwise.hpp"
#include "impl/norm.hpp"
#include "impl/pool.hpp"
#include "impl/reduce.hpp"
#include "impl/softmax.hpp"

namespace tileops::cpu {
namespace {

constexpr KernelTable table_for(Isa isa) {
  return KernelTable{
      .isa = isa,
      .rms_norm = &rms_norm_kernel,
      .fused_add_rms_norm = &fused_add_rms_norm_kernel,
      .layer_norm = &layer_norm_kernel,
      .softmax = &softmax_kernel,
      .silu_and_mul = &silu_and_mul_kernel,
      .gelu_and_mul = &gelu_and_mul_kernel,
      .add = &add_kernel,
      .add_row_broadcast = &add_row_broadcast_kernel,
      .relu = &relu_kernel,
      .gelu = &gelu_kernel,
      .reduce = &reduce_kernel,
      .max_pool2d = &max_pool2d_kernel,
      .avg_pool2d = &avg_pool2d_kernel,
      .batch_norm_stats = &batch_norm_stats_kernel,
      .batch_norm_channel = &batch_norm_channel_kernel,
      .batch_norm_apply = &batch_norm_apply_kernel,
      .convert = &convert_kernel,
      .dot_rows = &dot_rows_kernel,
      .alibi = &alibi_kernel,
      .attention_pack = &attention_pack_kernel,
      .attention_rows = &attention_rows_kernel,
      .attention_decode_part = &attention_decode_part_kernel,
  };
}

}  // namespace
}  // namespace tileops::cpu
