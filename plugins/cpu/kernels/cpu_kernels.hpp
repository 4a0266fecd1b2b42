// Fast CPU kernels on raw contiguous row-major buffers.
//
// Every function takes the element type as a DType plus untyped buffers and sizes, dispatches on
// the dtype, and throws std::invalid_argument for a dtype (or dtype pair) it does not list, for a
// negative size, and for a null buffer that is not marked optional. Half types (float16,
// bfloat16) are converted to float32 in registers and every kernel accumulates in float32, or in
// float64 where a reduction's output is float64. Buffers need no particular alignment. Unless a
// function says otherwise its output must not overlap any of its inputs. Large calls are split
// over the shared thread pool; small ones run on the calling thread. Every function may be called
// from many threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/dtype.hpp"

namespace tileops::cpu {

// ---- Instruction sets and threads
// ----------------------------------------------------------------

// The vector instruction sets the kernels are built for. amx is avx512 plus AMX-TILE, AMX-BF16
// and AVX-512 BF16, with the operating system's leave to use the tile registers: its bfloat16
// attention prefill runs on tile multiply-adds, every other kernel is avx512's. avx512 needs
// AVX-512 F, BW, VL and DQ; avx2 needs AVX2, FMA and F16C; portable runs on any CPU.
enum class Isa { portable, avx2, avx512, amx };

std::string_view isa_name(Isa isa);

// The instruction sets this CPU can run, from portable to the best.
std::vector<Isa> available_isas();

// The best instruction set TILEOPS_CPU_ISA lets the kernels use, given its value (null or empty
// when unset): one of the names isa_name gives. Any other value gives no cap and a warning naming
// the variable, the value and the names accepted.
struct IsaCap {
  std::optional<Isa> isa;  // none: every instruction set the CPU runs
  std::string warning;     // empty when the value was used as given
};
IsaCap isa_cap(const char* value);

// The instruction set the kernels use now: unless force_isa chose another, the best available
// one within TILEOPS_CPU_ISA's cap (read once, at the first kernel call; a bad value is warned
// about through the thread pool's warning handler).
Isa active_isa();

// Test hook: makes every kernel use `isa` until reset_isa(). Throws std::invalid_argument when the
// CPU cannot run it.
void force_isa(Isa isa);
void reset_isa();

// The number of threads that run a split call, the caller included: TILEOPS_CPU_THREADS when set
// to an integer from 1 to 1024, otherwise (with a warning for a malformed value) the hardware
// concurrency; fewer, with a warning, when the system refuses more threads. Fixed at the first
// kernel call.
int thread_count();

// ---- Normalisation ------------------------------------------------------------------------------

// x, y: [rows, n] of dtype; weight: [n] of dtype, or null for 1.
// y = x * rsqrt(mean(x^2) + eps) * weight per row. y may equal x (in place).
// dtype: float32, float16, bfloat16.
void rms_norm(DType dtype, int64_t rows, int64_t n, const void* x, const void* weight, void* y,
              double eps);

// x, residual, y: [rows, n] of dtype; weight: [n] of dtype.
// residual = x + residual, rounded to dtype and stored; then y = r * rsqrt(mean(r^2) + eps) *
// weight per row with r the stored residual. y must not overlap x or residual; x may equal
// residual. dtype: float32, float16, bfloat16.
void fused_add_rms_norm(DType dtype, int64_t rows, int64_t n, const void* x, void* residual,
                        const void* weight, void* y, double eps);

// x, y: [rows, n] of dtype; weight, bias: [n] of dtype, or null for 1 and 0.
// y = (x - mean) * rsqrt(var + eps) * weight + bias per row, var the biased variance.
// y may equal x (in place). dtype: float32, float16, bfloat16.
void layer_norm(DType dtype, int64_t rows, int64_t n, const void* x, const void* weight,
                const void* bias, void* y, double eps);

// x, y: [rows, n] of dtype. y = exp(x - max) / sum(exp(x - max)) per row.
// y may equal x (in place). dtype: float32, float16, bfloat16.
void softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y);

// x, y: [N, C, inner] of dtype; running_mean, running_var: [C] float32; weight, bias: [C]
// float32, or null for 1 and 0.
// y = (x - running_mean[c]) * rsqrt(running_var[c] + eps) * weight[c] + bias[c].
// y may equal x (in place). dtype: float32, float16, bfloat16.
void batch_norm_infer(DType dtype, int64_t N, int64_t C, int64_t inner, const void* x,
                      const float* running_mean, const float* running_var, const float* weight,
                      const float* bias, void* y, double eps);

// x, y: [N, C, inner] of dtype; weight, bias: [C] float32 or null; mean_out, rstd_out: [C]
// float32, written; running_mean, running_var: [C] float32 or null, updated in place.
// Per channel c over N and inner: mean, biased variance var; rstd = rsqrt(var + eps);
// y = (x - mean) * rstd * weight[c] + bias[c]; mean_out = mean; rstd_out = rstd;
// running_mean = (1 - momentum) * running_mean + momentum * mean;
// running_var = (1 - momentum) * running_var + momentum * var * count / (count - 1).
// count = N * inner must be at least 2. y may equal x (in place).
// dtype: float32, float16, bfloat16.
void batch_norm_train(DType dtype, int64_t N, int64_t C, int64_t inner, const void* x,
                      const float* weight, const float* bias, void* y, float* mean_out,
                      float* rstd_out, float* running_mean, float* running_var, double momentum,
                      double eps);

// ---- Elementwise --------------------------------------------------------------------------------

// x: [rows, 2n] of dtype; y: [rows, n] of dtype. y[r, j] = silu(x[r, j]) * x[r, n + j], where
// silu(v) = v / (1 + exp(-v)). dtype: float32, float16, bfloat16.
void silu_and_mul(DType dtype, int64_t rows, int64_t n, const void* x, void* y);

// x: [rows, 2n] of dtype; y: [rows, n] of dtype. y[r, j] = gelu(x[r, j]) * x[r, n + j], gelu
// as the function gelu below computes it (erf form, or tanh with tanh_approximation).
// dtype: float32, float16, bfloat16.
void gelu_and_mul(DType dtype, int64_t rows, int64_t n, const void* x, void* y,
                  bool tanh_approximation);

// a, b, y: [numel] of dtype. y = a + alpha * b, rounded once to dtype. y may equal a or b
// (in place). dtype: float32, float16, bfloat16, int32, int64; for the integer dtypes alpha must be
// an integer, the arithmetic wraps around and alpha is converted to int64.
void add(DType dtype, int64_t numel, const void* a, const void* b, void* y, double alpha = 1.0);

// a, y: [rows, n] of dtype; b_row: [n] of dtype, added to every row. y = a + alpha * b_row.
// y may equal a (in place). dtypes and alpha as for add.
void add_row_broadcast(DType dtype, int64_t rows, int64_t n, const void* a, const void* b_row,
                       void* y, double alpha = 1.0);

// x, y: [numel] of dtype. y = max(x, 0); NaN stays NaN. y may equal x (in place).
// dtype: float32, float16, bfloat16.
void relu(DType dtype, int64_t numel, const void* x, void* y);

// x, y: [numel] of dtype. y = x * Phi(x), Phi the standard normal distribution function, or with
// tanh_approximation y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Computed in float32
// with a relative error, also where y is tiny, of about 5 float32 ulp for the erf form (on the
// portable ISA, up to x^2 / 2 more for negative x) and for the tanh form of a few ulp for x >= 0
// and up to about 3 |2u| ulp, u the tanh's argument, for negative x (the condition number there).
// Results below about 1e-36 in magnitude may flush to zero, -0 for negative x. NaN stays NaN,
// +inf gives +inf and -inf gives -0 (the limits). y may equal x (in place).
// dtype: float32, float16, bfloat16.
void gelu(DType dtype, int64_t numel, const void* x, void* y, bool tanh_approximation);

// ---- Lookup -------------------------------------------------------------------------------------

// ids: [count] of index_dtype (int32 or int64); weight: [vocab, hidden] of dtype (any, copied
// bitwise); y: [count, hidden] of dtype. y[i, :] = weight[ids[i], :]. Throws
// std::invalid_argument, writing nothing, when an id is outside [0, vocab).
void embedding(DType dtype, DType index_dtype, int64_t count, int64_t vocab, int64_t hidden,
               const void* ids, const void* weight, void* y);

// ---- Position encoding --------------------------------------------------------------------------

// The shape and rotation of rope(): x and y are [batch, seq, heads, 2 * half], or [batch, heads,
// seq, 2 * half] when heads_first.
struct RopeGeometry {
  int64_t batch = 0, seq = 0, heads = 0, half = 0;
  bool heads_first = false;
  bool interleaved = false;
  double theta = 10000.0;
  double scale = 1.0;
};

// Rotary position embedding of x into y (dtype float32, float16 or bfloat16; y may equal x).
// positions: [seq] int64, or null for 0 .. seq - 1; factors: [half] float32, or null for ones.
// For sequence index s and pair i < half, with angle = positions[s] * theta^(-i / half) /
// factors[i], c = scale cos(angle) and sn = scale sin(angle) (both in double, then float32),
// the pair (a, b) becomes (a c - b sn, b c + a sn) in float32, rounded once to dtype. The pair
// is (i, i + half), or (2i, 2i + 1) when interleaved.
void rope(DType dtype, const RopeGeometry& geometry, const int64_t* positions, const float* factors,
          const void* x, void* y);

// ---- Mixture of experts -------------------------------------------------------------------------

// The router: logits [rows, experts] of dtype (float32, float16, bfloat16); bias [experts]
// float32 or null; weights [rows, top_k] float32 and ids [rows, top_k] int32 written. Per row
// the scores are the softmax of the logits (or, with sigmoid, each logit's sigmoid) in float32;
// the top_k experts with the largest score + bias are picked, the larger first, the lower id
// first among equals and a NaN after every number; weights get their scores (without bias),
// divided by their sum when renormalize, times scale. 1 <= top_k <= experts.
void moe_route(DType dtype, int64_t rows, int64_t experts, int64_t top_k, bool sigmoid, bool renormalize,
               float scale, const void* logits, const float* bias, float* weights, int32_t* ids);

// ---- Reductions ---------------------------------------------------------------------------------

// x: [outer, reduce, inner] of in_dtype; y: [outer, inner] of out_dtype.
// y[o, i] = sum (or product) over r of x[o, r, i]; reduce = 0 gives 0 (or 1).
// Pairs (in -> out): float32, float16, bfloat16, float64 -> the same dtype, float32 or float64;
// int32, int64 -> int64. Accumulates in float32 for float32, float16 and bfloat16 outputs, in
// float64 for float64 outputs (a float64 input is first rounded to a float32 output's precision),
// in wrapping int64 for int64 outputs. Summation order differs from a sequential loop.
void reduce_sum(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                const void* x, void* y);
void reduce_prod(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                 const void* x, void* y);
// The sums of reduce_sum divided by reduce (NaN for reduce = 0), for the floating pairs only.
void reduce_mean(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                 const void* x, void* y);

// ---- Pooling ------------------------------------------------------------------------------------

// The window of a 2-D pooling: output (i, j) covers input rows i * stride_h - padding_h +
// a * dilation_h for a < kernel_h, and columns likewise; rows and columns outside the input are
// padding, never read. Sizes, strides and dilations at least 1; 0 <= padding <= kernel / 2.
struct Pool2dWindow {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t padding_h = 0, padding_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
};

// x: [planes, h, w] (planes = N * C of an NCHW tensor); y: [planes, out_h, out_w], all of dtype
// (float32, float16, bfloat16). out_h and out_w are at least 1 and every window starts inside the
// input or its left (top) padding: (out_h - 1) * stride_h <= h + padding_h - 1, and so for the
// width; this is what torch's output size rule (ceil_mode's included) gives.
// y[p, i, j] = the maximum of the window's elements in x; NaN when one of them is NaN.
void max_pool2d(DType dtype, int64_t planes, int64_t h, int64_t w, int64_t out_h, int64_t out_w,
                const Pool2dWindow& window, const void* x, void* y);
// The same shapes with dilation 1: y[p, i, j] = the float32 sum of the window's elements in x
// divided by `divisor` when it is not 0, else by the window's area clipped to the padded input
// (count_include_pad) or to x.
void avg_pool2d(DType dtype, int64_t planes, int64_t h, int64_t w, int64_t out_h, int64_t out_w,
                const Pool2dWindow& window, bool count_include_pad, int64_t divisor, const void* x,
                void* y);

// ---- Matrix multiply ----------------------------------------------------------------------------

// d = op(a) * op(b) with d: [m, n] (row stride ldd); op(a): [m, k], stored as a [m, k] matrix with
// row stride lda, or as [k, m] when trans_a; op(b): [k, n], stored as [k, n] with row stride ldb,
// or as [n, k] when trans_b. All of dtype. Row strides must be at least the stored row length.
// float32 runs OpenBLAS sgemm, float64 dgemm; float16 and bfloat16 operands are converted to
// float32 in blocks, multiplied by sgemm and rounded back. d must not overlap a or b.
// dtype: float32, float64, float16, bfloat16; call blas_refusal first for anything else.
void gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, bool trans_a,
          const void* b, int64_t ldb, bool trans_b, void* d, int64_t ldd);

// Why gemm cannot serve this call (unsupported dtype, negative sizes, sizes beyond the 32-bit BLAS
// index range), or nullopt when it can.
std::optional<std::string> blas_refusal(DType dtype, int64_t m, int64_t n, int64_t k);

// The most rows of a that dot_rows_gemm takes.
inline constexpr int kMaxDotRows = 8;

// d = a * b^T for float16 and bfloat16 with at most kMaxDotRows rows of a: the decode-sized
// products with weights stored [n, k], as linear layers store them. a: [m, k] (row stride lda),
// b: [n, k] (row stride ldb), d: [m, n] (row stride ldd), all of dtype; float32 accumulation.
// b is read once, as stored, and converted in registers (gemm would convert it to float32 in
// memory first, moving it three more times). d must not overlap a or b. Call dot_rows_refusal
// first; a refused call throws std::invalid_argument with the reason.
void dot_rows_gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                   const void* b, int64_t ldb, void* d, int64_t ldd);

// Why dot_rows_gemm cannot serve d = op(a) op(b) (a dtype other than float16 or bfloat16, more
// than kMaxDotRows rows of a, a transposed a, a b stored [k, n]), or nullopt when it can.
std::optional<std::string> dot_rows_refusal(DType dtype, int64_t m, bool trans_a, bool trans_b);

// ---- Attention ----------------------------------------------------------------------------------

// Scaled dot-product attention with grouped query heads, tiled with an online softmax: no call
// holds more than one block of scores per row. Query head h reads key/value head
// h / (heads / kv_heads). A query row's scores are s_j = scale * (q . k_j), capped to
// softcap * tanh(s_j / softcap) when softcap > 0, over the keys its mask leaves; its output is
// sum_j softmax(s)_j v_j, 0 when no key is visible. Accumulates in float32.
struct AttentionArgs {
  int64_t batch = 0;
  int64_t q_len = 0;   // Sq
  int64_t kv_len = 0;  // Skv
  int64_t heads = 0;
  int64_t kv_heads = 0;  // at least 1, divides heads
  int64_t head_dim = 0;  // 1 to 256
  // Query row i sits at key position i + kv_len - q_len; causal hides keys right of it, and
  // window_left = w >= 0 hides keys more than w left of it (-1: no window).
  bool causal = false;
  int64_t window_left = -1;
  double scale = 1.0;
  double softcap = 0.0;  // 0: no cap
  const void* q = nullptr;  // [batch, q_len, heads, head_dim]
  const void* k = nullptr;  // [batch, kv_len, kv_heads, head_dim]
  const void* v = nullptr;  // [batch, kv_len, kv_heads, head_dim]
  void* o = nullptr;        // [batch, q_len, heads, head_dim], written
  float* lse = nullptr;     // [batch, heads, q_len] natural-log sum of exp(s), -inf for no key; or null
};

// dtype: float32, float16, bfloat16 (q, k, v and o). Throws std::invalid_argument for bad sizes.
void attention(DType dtype, const AttentionArgs& args);

// One query token per sequence over a key/value cache, contiguous or paged. Key position p of
// sequence b lives in page block_table[b, p / block_size] at slot p % block_size of the pages
// [num_pages, block_size, kv_heads, head_dim]; a contiguous cache [batch, max_len, kv_heads,
// head_dim] is the same with no block table, one page of block_size = max_len per sequence.
// Sequence b attends to positions 0 .. seqlens[b] - 1 (the query sits at the last; window_left =
// w >= 0 keeps the last w + 1) with the scores of attention. Long sequences are split over
// threads when the batch alone would leave some idle, and the parts combined.
struct DecodeArgs {
  int64_t batch = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  // at least 1, divides heads
  int64_t head_dim = 0;  // 1 to 256
  int64_t window_left = -1;
  double scale = 1.0;
  double softcap = 0.0;
  const void* q = nullptr;          // [batch, heads, head_dim]
  const void* k = nullptr;          // the key pages (or cache)
  const void* v = nullptr;          // the value pages (or cache)
  void* o = nullptr;                // [batch, heads, head_dim], written
  const int32_t* seqlens = nullptr;  // [batch]
  const int32_t* block_table = nullptr;  // [batch, max_blocks]; null: a contiguous cache
  int64_t max_blocks = 1;
  int64_t block_size = 0;  // at least 1 when any sequence is not empty
  int64_t num_pages = 0;   // the pages k and v hold (batch for a contiguous cache)
};

// dtype: float32, float16, bfloat16. Throws std::invalid_argument for bad sizes, a sequence
// length outside [0, max_blocks * block_size], or a block-table entry outside [0, num_pages)
// for a page the sequence reads: no read outside the pages.
void attention_decode(DType dtype, const DecodeArgs& args);

// Writes the `added` new tokens of each sequence after its seqlens[b] cached ones: the token at
// position p = seqlens[b] + t goes to page block_table[b, p / block_size], slot p % block_size
// (block_table null: a contiguous cache, page b of block_size = max_len). Pages:
// [num_pages, block_size, kv_heads, head_dim]; k_new, v_new: [batch, added, kv_heads, head_dim];
// all of dtype (any, copied bitwise). When two tokens land on one slot the later in (b, t) order
// is kept. Throws std::invalid_argument for bad sizes, seqlens[b] + added beyond
// max_blocks * block_size, a negative length, or a page entry outside [0, num_pages).
struct CacheAppendArgs {
  int64_t batch = 0;
  int64_t added = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  void* k_pages = nullptr;
  void* v_pages = nullptr;
  const void* k_new = nullptr;
  const void* v_new = nullptr;
  const int32_t* seqlens = nullptr;
  const int32_t* block_table = nullptr;
  int64_t max_blocks = 1;
  int64_t block_size = 0;
  int64_t num_pages = 0;
};
void kv_cache_append(DType dtype, const CacheAppendArgs& args);

// ---- Positional bias ----------------------------------------------------------------------------

// y: [num_heads, seq_len, seq_len] of dtype. y[h, i, j] = slope_h * (j - i), with the ALiBi slopes
// of the paper for num_heads heads (a power of two p: slope_h = 2^(-8 (h + 1) / p); otherwise the
// slopes of the largest power of two below num_heads followed by every other slope of twice that).
// dtype: float32, float16, bfloat16.
void alibi(DType dtype, int64_t num_heads, int64_t seq_len, void* y);

// The slopes alibi uses for num_heads heads.
std::vector<double> alibi_slopes(int64_t num_heads);

}  // namespace tileops::cpu
