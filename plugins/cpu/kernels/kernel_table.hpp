// The per-instruction-set kernel entry points. Each isa_*.cpp file compiles the bodies in impl/
// for one instruction set and fills one table; the public functions validate their arguments,
// split the work and call the active table. Every entry handles one range of a split call.
#pragma once

#include <cstdint>

#include "cpu_kernels.hpp"
#include "tileops/dtype.hpp"

namespace tileops::cpu {

enum class ReduceOp { sum, prod };

// Inner extents up to this are reduced in packed mode: several consecutive rows of `inner`
// elements at a time. Wider ones are cut into column blocks of kReduceColumnBlock elements.
inline constexpr int64_t kReducePackLimit = 256;
inline constexpr int64_t kReduceColumnBlock = 4096;

// One reduction over x viewed as [outer, reduce, inner] with slab stride x_outer_stride elements
// (at least reduce * inner; larger when x is a range of a longer reduce axis). Work items are
// (outer index, column block) pairs, column blocks as reduce_column_blocks(inner) gives them.
struct ReduceArgs {
  ReduceOp op;
  DType in;
  DType out;
  const void* x;
  int64_t x_outer_stride;
  void* y;
  int64_t reduce;
  int64_t inner;
  double divisor = 1.0;  // every result is divided by it before it is stored (a mean: reduce)
};

inline int64_t reduce_column_blocks(int64_t inner) {
  return inner <= kReducePackLimit ? 1 : (inner + kReduceColumnBlock - 1) / kReduceColumnBlock;
}

// Attention works on blocks of kAttentionKeyBlock keys and tiles of kAttentionRowTile rows, in
// float32 rows of attention_padded_dim(head_dim) (a multiple of every vector width).
inline constexpr int64_t kAttentionKeyBlock = 64;
inline constexpr int64_t kAttentionRowTile = 4;

inline int64_t attention_padded_dim(int64_t head_dim) { return (head_dim + 15) / 16 * 16; }
inline int64_t attention_padded_rows(int64_t rows) {
  return (rows + kAttentionRowTile - 1) / kAttentionRowTile * kAttentionRowTile;
}

// The AMX bfloat16 prefill (impl/attention_amx.hpp) takes keys kAttentionAmxKeys at a time (two
// packed blocks), rows in pairs of 16-row tiles and the head dim 32 bfloat16 elements (one tile
// row of 64 bytes) at a time.
inline constexpr int64_t kAttentionAmxKeys = 2 * kAttentionKeyBlock;
inline int64_t attention_amx_rows(int64_t rows) { return (rows + 31) / 32 * 32; }
inline int64_t attention_amx_dim(int64_t head_dim) { return (head_dim + 31) / 32 * 32; }

// The floats attention_rows needs for `rows` query rows (query positions times group), on any
// instruction set: the float32 layout (queries, outputs, one block of scores, maxima and sums)
// or the AMX one (bfloat16 queries, outputs, scores, probabilities as two bfloat16 terms, maxima
// and sums), whichever is larger.
inline int64_t attention_rows_scratch(int64_t rows, int64_t head_dim) {
  const int64_t r = attention_padded_rows(rows);
  const int64_t vector_layout = 2 * r * attention_padded_dim(head_dim) + r * kAttentionKeyBlock + 2 * r;
  const int64_t ra = attention_amx_rows(rows), da = attention_amx_dim(head_dim);
  const int64_t amx_layout = ra * (da / 2 + da + 2 * kAttentionAmxKeys + 2);
  return vector_layout > amx_layout ? vector_layout : amx_layout;
}

// The floats attention_pack writes for kv_len keys: the transposed key blocks, then the values.
inline int64_t attention_packed_floats(int64_t kv_len, int64_t head_dim) {
  const int64_t blocks = (kv_len + kAttentionKeyBlock - 1) / kAttentionKeyBlock;
  return 2 * blocks * kAttentionKeyBlock * attention_padded_dim(head_dim);
}

// One part of a decode, for one key/value head: the unnormalised output rows [rows_p, dp], then
// the row maxima and the row sums [rows_p] each, rows_p = attention_padded_rows(group).
inline int64_t attention_part_floats(int64_t group, int64_t head_dim) {
  const int64_t r = attention_padded_rows(group);
  return r * attention_padded_dim(head_dim) + 2 * r;
}
// The floats attention_decode_part needs besides its parts.
inline int64_t attention_decode_scratch(int64_t kv_heads, int64_t group, int64_t head_dim) {
  const int64_t r = attention_padded_rows(group);
  return kv_heads * (r * attention_padded_dim(head_dim) + r * kAttentionKeyBlock);
}

// One 2-D pooling call as the front end checked it: x [planes, h, w], y [planes, out_h, out_w].
// Work items are the output rows of every plane (plane * out_h + row).
struct PoolArgs {
  DType dtype;
  const void* x;
  void* y;
  int64_t h, w, out_h, out_w;
  Pool2dWindow window;
  bool count_include_pad = true;  // average only
  int64_t divisor = 0;            // average only: 0 for the window's area
};

struct KernelTable {
  Isa isa;
  // Rows [r0, r1) of [rows, n].
  void (*rms_norm)(DType, const void* x, const void* weight, void* y, int64_t n, float eps,
                   int64_t r0, int64_t r1);
  // residual: [rows, n], read and written.
  void (*fused_add_rms_norm)(DType, const void* x, void* residual, const void* weight, void* y,
                             int64_t n, float eps, int64_t r0, int64_t r1);
  void (*layer_norm)(DType, const void* x, const void* weight, const void* bias, void* y, int64_t n,
                     float eps, int64_t r0, int64_t r1);
  // scratch: n floats.
  void (*softmax)(DType, const void* x, void* y, int64_t n, float* scratch, int64_t r0, int64_t r1);
  // Rows [r0, r1) and output columns [c0, c1) of y: [rows, n].
  void (*silu_and_mul)(DType, const void* x, void* y, int64_t n, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1);
  void (*gelu_and_mul)(DType, bool tanh_approximation, const void* x, void* y, int64_t n,
                       int64_t r0, int64_t r1, int64_t c0, int64_t c1);
  // Elements [i0, i1).
  void (*add)(DType, const void* a, const void* b, void* y, double alpha, int64_t i0, int64_t i1);
  // Rows [r0, r1) and columns [c0, c1) of [rows, n].
  void (*add_row_broadcast)(DType, const void* a, const void* b_row, void* y, double alpha,
                            int64_t n, int64_t r0, int64_t r1, int64_t c0, int64_t c1);
  void (*relu)(DType, const void* x, void* y, int64_t i0, int64_t i1);
  void (*gelu)(DType, bool tanh_approximation, const void* x, void* y, int64_t i0, int64_t i1);
  // Work items [i0, i1) of args.
  void (*reduce)(const ReduceArgs& args, int64_t i0, int64_t i1);
  // Work items [i0, i1) of args; row: args.w floats of scratch.
  void (*max_pool2d)(const PoolArgs& args, float* row, int64_t i0, int64_t i1);
  void (*avg_pool2d)(const PoolArgs& args, float* row, int64_t i0, int64_t i1);
  // Adds, for channels [c0, c1) and batch rows [n0, n1) of x: [N, C, inner], the sums of
  // (x - pivot[c]) and (x - pivot[c])^2 into s1[c] and s2[c].
  void (*batch_norm_stats)(DType, const void* x, int64_t C, int64_t inner, const float* pivot,
                           int64_t n0, int64_t n1, int64_t c0, int64_t c1, double* s1, double* s2);
  // For inner > 1: y = (x - center[c]) * scale[c] + shift[c] over channel c, and when next >= 0
  // the sums of channel next added as batch_norm_stats adds them, for all N rows.
  void (*batch_norm_channel)(DType, const void* x, void* y, int64_t N, int64_t C, int64_t inner,
                             int64_t c, const float* center, const float* scale, const float* shift,
                             int64_t next, const float* pivot, double* s1, double* s2);
  // y = (x - center[c]) * scale[c] + shift[c] over x: [N, C, inner]. With inner > 1 the range
  // [i0, i1) counts (n, c) rows; with inner == 1 it counts batch rows n of C elements.
  void (*batch_norm_apply)(DType, const void* x, void* y, int64_t C, int64_t inner,
                           const float* center, const float* scale, const float* shift, int64_t i0,
                           int64_t i1);
  // Rows [r0, r1) of a [rows, cols] matrix converted between dtypes (float32, float16, bfloat16).
  void (*convert)(DType from, DType to, const void* src, int64_t ld_src, void* dst, int64_t ld_dst,
                  int64_t cols, int64_t r0, int64_t r1);
  // Rows [n0, n1) of w (float32, float16 or bfloat16; row stride ldw): d[i, n] = sum_j a[i, j] *
  // w[n, j] for i < m (1 <= m <= kMaxDotRows), with a float32 [m, k] contiguous and d of w's
  // dtype (row stride ldd).
  void (*dot_rows)(DType, const float* a, int64_t m, int64_t k, const void* w, int64_t ldw,
                   void* d, int64_t ldd, int64_t n0, int64_t n1);
  // Rows [r0, r1) (each one (head, i) pair) and columns [c0, c1) of the ALiBi bias.
  void (*alibi)(DType, const float* slopes, int64_t seq_len, void* y, int64_t r0, int64_t r1,
                int64_t c0, int64_t c1);
  // The key blocks [block0, block1) of sequence b, key/value head kvh, packed as float32: kt
  // the keys transposed, [blocks][padded dim][kAttentionKeyBlock]; v the values,
  // [blocks * kAttentionKeyBlock][padded dim] (each of attention_packed_floats / 2 floats).
  // The amx table packs bfloat16 as its tiles read them instead, block b from the same offset
  // (impl/attention_amx.hpp).
  void (*attention_pack)(DType, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t block0,
                         int64_t block1, float* kt, float* v);
  // Attention of the query rows [i0, i1) of sequence b, for the query heads of key/value head
  // kvh, over its packed blocks; scratch: attention_rows_scratch((i1 - i0) * group, head_dim)
  // floats.
  void (*attention_rows)(DType, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t i0,
                         int64_t i1, const float* kt, const float* v, float* scratch);
  // The keys [j0, j1) of decode sequence b for every key/value head, into kv_heads parts
  // (attention_part_floats each, head after head); scratch: attention_decode_scratch floats.
  void (*attention_decode_part)(DType, const DecodeArgs& args, int64_t b, int64_t j0, int64_t j1,
                                float* part, float* scratch);
};

// Throws std::invalid_argument: `kernel` has no code for `dtype`. The public functions check
// dtypes first, so a kernel reaching this is a bug in its front end.
[[noreturn]] void unsupported_dtype(const char* kernel, DType dtype);

// The table of the active instruction set.
const KernelTable& active_kernels();

const KernelTable& amx_kernels();
const KernelTable& avx512_kernels();
const KernelTable& avx2_kernels();
const KernelTable& portable_kernels();

}  // namespace tileops::cpu
