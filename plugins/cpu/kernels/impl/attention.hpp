// Attention over blocks of keys with an online softmax (cpu_kernels.hpp): the query rows of one
// key/value head (prefill) and the parts of a decode. Rows are float32, scaled queries padded
// to attention_padded_dim; a block's scores sit in a [rows, kAttentionKeyBlock] scratch and
// become its probabilities there before they weight the values.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// Vectors per register tile: kAttentionRowTile rows times this many vectors of keys (scores) or
// of output columns (values), 16 accumulators with 32 vector registers, 8 with 16. The loops over
// a tile are unrolled by pragma: -O2 would keep the accumulators in memory otherwise.
constexpr int64_t kTileVectors = Vf::width >= 16 ? 4 : 2;
constexpr int64_t kRowTile = kAttentionRowTile;
constexpr int64_t kKeyBlock = kAttentionKeyBlock;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// How many tokens ahead a decode fetches keys, and the elements of T in a cache line.
constexpr int64_t kPrefetchTokens = 4;
template <class T>
constexpr int64_t kLineElements = 64 / static_cast<int64_t>(sizeof(T));

// Row r of q (n values of T) times scale into dst (dp floats, zero past n).
template <class T>
void pack_row(const T* src, int64_t n, float scale, int64_t dp, float* dst) {
  constexpr int64_t W = Vf::width;
  const Vf::R s = Vf::set1(scale);
  for (int64_t c = 0; c < dp; c += W) {
    const int64_t lanes = std::clamp<int64_t>(n - c, 0, W);
    Vf::store(dst + c, lanes == 0 ? Vf::zero() : Vf::mul(Vf::loadn(src + c, lanes), s));
  }
}

// kt[c][j] = k_j[c] for the n keys of a block (k_j at k + j * ldk), c < d; the other entries of
// kt keep what they held.
template <class T>
void pack_keys_transposed(const T* k, int64_t ldk, int64_t n, int64_t d, float* kt) {
  alignas(64) float row[256 + 16];
  for (int64_t j = 0; j < n; ++j) {
    pack_row(k + j * ldk, d, 1.0f, attention_padded_dim(d), row);
    for (int64_t c = 0; c < d; ++c) kt[c * kKeyBlock + j] = row[c];
  }
}

// s[r][j] = q[r] . kt[:, j] for kRowTile rows of q (stride dp) and a block of keys.
[[gnu::always_inline]] inline void score_tile(const float* q, const float* kt, int64_t dp, float* s) {
  constexpr int64_t W = Vf::width;
  for (int64_t c = 0; c < kKeyBlock; c += kTileVectors * W) {
    Vf::R acc[kRowTile][kTileVectors];
    #pragma GCC unroll 16
    for (auto& row : acc) {
      #pragma GCC unroll 16
      for (auto& a : row) a = Vf::zero();
    }
    for (int64_t d = 0; d < dp; ++d) {
      Vf::R k[kTileVectors];
      #pragma GCC unroll 16
      for (int64_t v = 0; v < kTileVectors; ++v) k[v] = Vf::load(kt + d * kKeyBlock + c + v * W);
      #pragma GCC unroll 16
      for (int64_t r = 0; r < kRowTile; ++r) {
        const Vf::R qb = Vf::set1(q[r * dp + d]);
        #pragma GCC unroll 16
        for (int64_t v = 0; v < kTileVectors; ++v) acc[r][v] = Vf::fma(qb, k[v], acc[r][v]);
      }
    }
    #pragma GCC unroll 16
    for (int64_t r = 0; r < kRowTile; ++r) {
      #pragma GCC unroll 16
      for (int64_t v = 0; v < kTileVectors; ++v) Vf::store(s + r * kKeyBlock + c + v * W, acc[r][v]);
    }
  }
}

// s[r * kKeyBlock] = q[r] . key for rows_p rows of q (stride dp) and one key of d values: the
// dot products along the head dim, for keys that serve few rows.
template <class T>
[[gnu::always_inline]] inline void score_key(const float* q, int64_t rows_p, const T* key, int64_t d, int64_t dp,
                                             float* s) {
  constexpr int64_t W = Vf::width;
  for (int64_t r0 = 0; r0 < rows_p; r0 += kRowTile) {
    Vf::R acc[kRowTile];
    #pragma GCC unroll 16
    for (auto& a : acc) a = Vf::zero();
    for (int64_t c = 0; c < d; c += W) {
      const Vf::R kv = Vf::loadn(key + c, lanes_left<Vf>(c, d));
      #pragma GCC unroll 16
      for (int64_t r = 0; r < kRowTile; ++r) acc[r] = Vf::fma(Vf::load(q + (r0 + r) * dp + c), kv, acc[r]);
    }
    #pragma GCC unroll 16
    for (int64_t r = 0; r < kRowTile; ++r) s[(r0 + r) * kKeyBlock] = Vf::sum(acc[r]);
  }
}

// o[r][c0 ...) += sum_{j < n} p[r][j] v_j[c0 ...] for kRowTile rows over NV vectors of columns;
// v_j = v + j * ldv, whose last vector holds `last` lanes.
template <int64_t NV, class T>
[[gnu::always_inline]] inline void value_tile(const float* p, int64_t n, const T* v, int64_t ldv, int64_t last,
                                              float* o, int64_t ldo) {
  constexpr int64_t W = Vf::width;
  Vf::R acc[kRowTile][NV];
  #pragma GCC unroll 16
  for (int64_t r = 0; r < kRowTile; ++r) {
    #pragma GCC unroll 16
    for (int64_t x = 0; x < NV; ++x) acc[r][x] = Vf::load(o + r * ldo + x * W);
  }
  for (int64_t j = 0; j < n; ++j) {
    Vf::R vv[NV];
    #pragma GCC unroll 16
    for (int64_t x = 0; x < NV; ++x) vv[x] = x + 1 < NV ? Vf::load(v + j * ldv + x * W) : Vf::loadn(v + j * ldv + x * W, last);
    #pragma GCC unroll 16
    for (int64_t r = 0; r < kRowTile; ++r) {
      const Vf::R pb = Vf::set1(p[r * kKeyBlock + j]);
      #pragma GCC unroll 16
      for (int64_t x = 0; x < NV; ++x) acc[r][x] = Vf::fma(pb, vv[x], acc[r][x]);
    }
  }
  #pragma GCC unroll 16
  for (int64_t r = 0; r < kRowTile; ++r) {
    #pragma GCC unroll 16
    for (int64_t x = 0; x < NV; ++x) Vf::store(o + r * ldo + x * W, acc[r][x]);
  }
}

// Calls f.template operator()<NV>() with NV = vectors, from 1 to kTileVectors.
template <int64_t NV = 1, class F>
[[gnu::always_inline]] inline void with_tile_vectors(int64_t vectors, F&& f) {
  if constexpr (NV < kTileVectors) {
    if (vectors != NV) return with_tile_vectors<NV + 1>(vectors, f);
  }
  f.template operator()<NV>();
}

// o[r] += sum_{j < n} p[r][j] v_j over the d columns, for rows_p rows (o's stride dp).
template <class T>
void accumulate_values(const float* p, int64_t rows_p, int64_t n, const T* v, int64_t ldv, int64_t d, float* o,
                       int64_t dp) {
  constexpr int64_t W = Vf::width;
  for (int64_t r0 = 0; r0 < rows_p; r0 += kRowTile) {
    const float* pr = p + r0 * kKeyBlock;
    float* orow = o + r0 * dp;
    for (int64_t c = 0; c < d; c += kTileVectors * W) {
      const int64_t vectors = std::min(kTileVectors, (d - c + W - 1) / W);
      const int64_t last = std::min(W, d - c - (vectors - 1) * W);
      with_tile_vectors(vectors, [&]<int64_t NV>() { value_tile<NV>(pr, n, v + c, ldv, last, orow + c, dp); });
    }
  }
}

// cap * tanh(s / cap) over a block row of kKeys, as 1 - 2 / (1 + exp(2 s / cap)) with the
// argument clamped where tanh is +-1 in float32.
template <int64_t kKeys>
void cap_scores(float* row, float cap) {
  constexpr int64_t W = Vf::width;
  const Vf::R twice_inv = Vf::set1(2.0f / cap), c = Vf::set1(cap), one = Vf::set1(1.0f), two = Vf::set1(2.0f);
  const Vf::R lo = Vf::set1(-30.0f), hi = Vf::set1(30.0f);
  for (int64_t j = 0; j < kKeys; j += W) {
    const Vf::R u = Vf::min(hi, Vf::max(lo, Vf::mul(Vf::load(row + j), twice_inv)));
    const Vf::R t = Vf::sub(one, Vf::mul(two, Vf::reciprocal(Vf::add(one, Vf::exp(u)))));
    Vf::store(row + j, Vf::mul(c, t));
  }
}

// Folds one block of scores (s: rows_p rows of kKeys, a multiple of the vector), each times
// `scale` (positive), into the running rows: m the maxima, l the sums of exp(s - m), o (stride
// dp) the unnormalised outputs. visible(r) gives the keys [lo, hi) of the block row r sees.
// Hands the probabilities exp(s - m) (0 for hidden keys) to emit(r, j, p), a vector of row r
// from key j, and may overwrite s.
template <int64_t kKeys = kKeyBlock, class Visible, class Emit>
void softmax_block(float* s, int64_t rows_p, float scale, float softcap, Visible&& visible, float* m, float* l,
                   float* o, int64_t dp, Emit&& emit) {
  constexpr int64_t W = Vf::width;
  for (int64_t r = 0; r < rows_p; ++r) {
    float* row = s + r * kKeys;
    const auto [lo, hi] = visible(r);
    if (lo >= hi) {
      for (int64_t j = 0; j < kKeys; j += W) emit(r, j, Vf::zero());
      continue;
    }
    // The scores' factor on the way into exp: the scale itself, or 1 for scores capped here
    // (scaled first).
    float fold = scale;
    if (softcap > 0) {
      if (scale != 1.0f) {
        for (int64_t j = 0; j < kKeys; j += W) Vf::store(row + j, Vf::mul(Vf::load(row + j), Vf::set1(scale)));
      }
      cap_scores<kKeys>(row, softcap);
      fold = 1.0f;
    }
    std::fill(row, row + lo, kNegInf);
    std::fill(row + hi, row + kKeys, kNegInf);
    Vf::R mx = Vf::set1(kNegInf);
    for (int64_t j = 0; j < kKeys; j += W) mx = Vf::max(Vf::load(row + j), mx);
    // The maximum of the raw scores times a positive factor is the scaled scores' maximum.
    const float m_new = std::max(m[r], Vf::max_of(mx) * fold);
    const float alpha = m_new == m[r] ? 1.0f : std::exp(m[r] - m_new);
    const Vf::R mv = Vf::set1(-m_new), fv = Vf::set1(fold);
    Vf::R sum = Vf::zero();
    for (int64_t j = 0; j < kKeys; j += W) {
      const Vf::R p = Vf::exp(Vf::fma(Vf::load(row + j), fv, mv));
      emit(r, j, p);
      sum = Vf::add(sum, p);
    }
    l[r] = l[r] * alpha + Vf::sum(sum);
    m[r] = m_new;
    if (alpha != 1.0f) {
      const Vf::R a = Vf::set1(alpha);
      for (int64_t c = 0; c < dp; c += W) Vf::store(o + r * dp + c, Vf::mul(Vf::load(o + r * dp + c), a));
    }
  }
}

// softmax_block's emit for the vector bodies: the probabilities go back into the scores s.
struct ProbabilitiesInPlace {
  float* s;
  [[gnu::always_inline]] void operator()(int64_t r, int64_t j, Vf::R p) const { Vf::store(s + r * kKeyBlock + j, p); }
};

// out = o / l (0 when l = 0) as T over d columns.
template <class T>
void store_normalized(const float* o, float l, int64_t d, T* out) {
  constexpr int64_t W = Vf::width;
  const Vf::R inv = Vf::set1(l > 0 ? 1.0f / l : 0.0f);
  for (int64_t c = 0; c < d; c += W) Vf::storen(out + c, Vf::mul(Vf::load(o + c), inv), lanes_left<Vf>(c, d));
}

// Packs the key blocks [block0, block1) of sequence b, key/value head kvh: keys transposed into
// kt ([blocks][dp][kKeyBlock], zero past the head dim and the last key) and values into v
// ([blocks * kKeyBlock][dp], zero past the head dim).
template <class T>
void attention_pack(const AttentionArgs& a, int64_t b, int64_t kvh, int64_t block0, int64_t block1, float* kt,
                    float* v) {
  const int64_t d = a.head_dim, dp = attention_padded_dim(d), ld = a.kv_heads * d;
  const T* ks = static_cast<const T*>(a.k) + (b * a.kv_len * a.kv_heads + kvh) * d;
  const T* vs = static_cast<const T*>(a.v) + (b * a.kv_len * a.kv_heads + kvh) * d;
  for (int64_t block = block0; block < block1; ++block) {
    const int64_t j0 = block * kKeyBlock, n = std::min(kKeyBlock, a.kv_len - j0);
    float* kb = kt + block * dp * kKeyBlock;
    std::fill(kb, kb + dp * kKeyBlock, 0.0f);
    pack_keys_transposed(ks + j0 * ld, ld, n, d, kb);
    for (int64_t j = 0; j < n; ++j) pack_row(vs + (j0 + j) * ld, d, 1.0f, dp, v + (j0 + j) * dp);
  }
}

// The online softmax over the key blocks that the query rows [i0, i1) of sequence b (for the
// query heads of key/value head kvh: rows = (i1 - i0) * group, row r is position i0 + r / group
// of head kvh * group + r % group) can see, which every prefill body shares. For each such block
// of kKeys keys, score_block(block, n) fills s (rows_p >= rows rows of kKeys) with the raw scores
// of its first n keys; softmax_block folds them times `scale` into m, l and o ([rows_p][ldo],
// zeroed here) and hands their probabilities to emit; value_block(block, n) adds the
// probabilities times the block's values to o. Then writes each row's normalised output and
// log-sum-exp.
template <class T, int64_t kKeys = kKeyBlock, class ScoreBlock, class Emit, class ValueBlock>
void online_softmax_rows(const AttentionArgs& a, int64_t b, int64_t kvh, int64_t i0, int64_t i1, int64_t rows_p,
                         float scale, float* s, float* o, int64_t ldo, float* m, float* l, ScoreBlock&& score_block,
                         Emit&& emit, ValueBlock&& value_block) {
  const int64_t group = a.heads / a.kv_heads, d = a.head_dim, rows = (i1 - i0) * group;
  std::fill(o, o + rows_p * ldo, 0.0f);
  std::fill(m, m + rows_p, kNegInf);
  std::fill(l, l + rows_p, 0.0f);
  // The keys row i sees: [lo(i), hi(i)), both non-decreasing in i.
  const auto lo_of = [&](int64_t i) {
    const int64_t diag = i + a.kv_len - a.q_len;
    return a.window_left >= 0 ? std::max<int64_t>(0, diag - a.window_left) : int64_t{0};
  };
  const auto hi_of = [&](int64_t i) {
    return a.causal ? std::clamp<int64_t>(i + a.kv_len - a.q_len + 1, 0, a.kv_len) : a.kv_len;
  };
  const int64_t end = hi_of(i1 - 1);
  for (int64_t block = lo_of(i0) / kKeys; block * kKeys < end; ++block) {
    const int64_t j0 = block * kKeys, n = std::min(kKeys, end - j0);
    score_block(block, n);
    const auto visible = [&](int64_t r) -> std::pair<int64_t, int64_t> {
      if (r >= rows) return {0, n};
      const int64_t i = i0 + r / group;
      return {std::clamp<int64_t>(lo_of(i) - j0, 0, n), std::clamp<int64_t>(hi_of(i) - j0, 0, n)};
    };
    softmax_block<kKeys>(s, rows_p, scale, static_cast<float>(a.softcap), visible, m, l, o, ldo, emit);
    value_block(block, n);
  }
  T* out = static_cast<T*>(a.o);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r / group, h = kvh * group + r % group;
    store_normalized(o + r * ldo, l[r], d, out + ((b * a.q_len + i) * a.heads + h) * d);
    if (a.lse != nullptr) {
      a.lse[(b * a.heads + h) * a.q_len + i] = l[r] > 0 ? m[r] + std::log(l[r]) : kNegInf;
    }
  }
}

// The query rows [i0, i1) of sequence b for the query heads of kvh, against that head's key
// and value blocks as attention_pack left them.
template <class T>
void attention_rows(const AttentionArgs& a, int64_t b, int64_t kvh, int64_t i0, int64_t i1, const float* kt,
                    const float* vb, float* scratch) {
  const int64_t group = a.heads / a.kv_heads, d = a.head_dim, dp = attention_padded_dim(d);
  const int64_t rows = (i1 - i0) * group, rows_p = attention_padded_rows(rows);
  float* q = scratch;
  float* o = q + rows_p * dp;
  float* s = o + rows_p * dp;
  float* m = s + rows_p * kKeyBlock;
  float* l = m + rows_p;
  const T* qs = static_cast<const T*>(a.q);
  const auto scale = static_cast<float>(a.scale);
  for (int64_t r = 0; r < rows_p; ++r) {
    if (r < rows) {
      const int64_t i = i0 + r / group, h = kvh * group + r % group;
      pack_row(qs + ((b * a.q_len + i) * a.heads + h) * d, d, scale, dp, q + r * dp);
    } else {
      std::fill(q + r * dp, q + (r + 1) * dp, 0.0f);
    }
  }
  online_softmax_rows<T>(
      a, b, kvh, i0, i1, rows_p, 1.0f, s, o, dp, m, l,
      [&](int64_t block, int64_t) {
        const float* kb = kt + block * dp * kKeyBlock;
        for (int64_t r0 = 0; r0 < rows_p; r0 += kRowTile) score_tile(q + r0 * dp, kb, dp, s + r0 * kKeyBlock);
      },
      ProbabilitiesInPlace{s},
      [&](int64_t block, int64_t n) { accumulate_values(s, rows_p, n, vb + block * kKeyBlock * dp, dp, dp, o, dp); });
}

// The keys [j0, j1) of decode sequence b for every key/value head, into one part per head
// (attention_part_floats each, head after head). The cache is walked in its own order, token by
// token with every head's row of a token together, so that it streams from memory.
template <class T>
void attention_decode_part(const DecodeArgs& a, int64_t b, int64_t j0, int64_t j1, float* part, float* scratch) {
  const int64_t group = a.heads / a.kv_heads, d = a.head_dim, dp = attention_padded_dim(d);
  const int64_t rows_p = attention_padded_rows(group), part_size = attention_part_floats(group, d);
  const int64_t head_rows = rows_p * dp;
  float* q = scratch;                          // [kv_heads][rows_p][dp]
  float* s = q + a.kv_heads * head_rows;       // [kv_heads][rows_p][kKeyBlock]
  const T* qs = static_cast<const T*>(a.q) + b * a.heads * d;
  for (int64_t kvh = 0; kvh < a.kv_heads; ++kvh) {
    for (int64_t r = 0; r < rows_p; ++r) {
      float* row = q + kvh * head_rows + r * dp;
      if (r < group) {
        pack_row(qs + (kvh * group + r) * d, d, static_cast<float>(a.scale), dp, row);
      } else {
        std::fill(row, row + dp, 0.0f);
      }
    }
    float* o = part + kvh * part_size;
    std::fill(o, o + head_rows, 0.0f);
    std::fill(o + head_rows, o + head_rows + rows_p, kNegInf);
    std::fill(o + head_rows + rows_p, o + head_rows + 2 * rows_p, 0.0f);
  }
  const T* ks = static_cast<const T*>(a.k);
  const T* vs = static_cast<const T*>(a.v);
  const int64_t token = a.kv_heads * d;
  for (int64_t j = j0; j < j1;) {
    const int64_t slot = j % a.block_size;
    const int64_t page = a.block_table != nullptr ? a.block_table[b * a.max_blocks + j / a.block_size] : b;
    const int64_t n = std::min({kKeyBlock, j1 - j, a.block_size - slot});
    const int64_t offset = (page * a.block_size + slot) * token;
    for (int64_t i = 0; i < n; ++i) {
      // Fetched ahead: the keys a few tokens on, and this token's values, which the value pass
      // reads head by head, out of the order prefetchers follow.
      const T* ahead = ks + offset + std::min(i + kPrefetchTokens, n - 1) * token;
      const T* values = vs + offset + i * token;
      for (int64_t e = 0; e < token; e += kLineElements<T>) {
        __builtin_prefetch(ahead + e);
        __builtin_prefetch(values + e);
      }
      for (int64_t kvh = 0; kvh < a.kv_heads; ++kvh) {
        score_key(q + kvh * head_rows, rows_p, ks + offset + i * token + kvh * d, d, dp,
                  s + kvh * rows_p * kKeyBlock + i);
      }
    }
    for (int64_t kvh = 0; kvh < a.kv_heads; ++kvh) {
      float* o = part + kvh * part_size;
      float* sk = s + kvh * rows_p * kKeyBlock;
      softmax_block(sk, rows_p, 1.0f, static_cast<float>(a.softcap),
                    [n](int64_t) { return std::pair<int64_t, int64_t>{0, n}; }, o + head_rows, o + head_rows + rows_p, o,
                    dp, ProbabilitiesInPlace{sk});
      accumulate_values(sk, rows_p, n, vs + offset + kvh * d, token, d, o, dp);
    }
    j += n;
  }
}

void attention_pack_kernel(DType dtype, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t block0,
                           int64_t block1, float* kt, float* v) {
  with_float_type("attention", dtype, [&]<class T>() { attention_pack<T>(args, b, kvh, block0, block1, kt, v); });
}

void attention_rows_kernel(DType dtype, const AttentionArgs& args, int64_t b, int64_t kvh, int64_t i0, int64_t i1,
                           const float* kt, const float* v, float* scratch) {
  with_float_type("attention", dtype, [&]<class T>() { attention_rows<T>(args, b, kvh, i0, i1, kt, v, scratch); });
}

void attention_decode_part_kernel(DType dtype, const DecodeArgs& args, int64_t b, int64_t j0, int64_t j1, float* part,
                                  float* scratch) {
  with_float_type("attention_decode", dtype, [&]<class T>() { attention_decode_part<T>(args, b, j0, j1, part, scratch); });
}

}  // namespace
}  // namespace tileops::cpu
