// The bfloat16 attention prefill on AMX tiles (isa_amx.cpp): Q K^T and P V as tile
// multiply-adds (TDPBF16PS: bfloat16 products summed in float32), with impl/attention.hpp's
// online softmax in AVX-512 between them; the probabilities enter P V as two bfloat16 terms, so
// that the results stay as close as the float32 path's. A tile is 16 rows of 64 bytes: 16 rows
// of 32 bfloat16 (the A operand), 16 row pairs of a [32, 16] bfloat16 matrix with each pair
// interleaved (the B operand: element (k, n) at row k / 2, position 2 n + k % 2), or 16 x 16
// float32 (the accumulator). tmm0-3 accumulate a 2 x 2 block of tiles, tmm4-5 hold its two A tiles and
// tmm6-7 its two B tiles.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "impl/attention.hpp"

namespace tileops::cpu {
namespace {

constexpr int64_t kTileRows = 16;                           // also an accumulator's float32 columns
constexpr int64_t kTileDepth = 32;                          // bfloat16 in a tile row: one reduction step
constexpr int64_t kTileElements = kTileRows * kTileDepth;   // bfloat16 in a tile
constexpr int64_t kTileBytes = 64;                          // a tile row
constexpr int64_t kBlockKeyTiles = kKeyBlock / kTileRows;   // key tiles of a packed block
constexpr int64_t kBlockKeySteps = kKeyBlock / kTileDepth;  // reduction steps over a packed block
// The keys the softmax and P V take at a time: more keys per load of the output tiles.
constexpr int64_t kAmxKeys = kAttentionAmxKeys;

// Palette 1 with all eight tiles 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// Configures this thread's tile registers for its lifetime and releases them at its end, which
// returns the thread to the cheaper context switches of one without tile state.
class TileScope {
 public:
  TileScope() {
    static constexpr TileConfig kConfig;
    _tile_loadconfig(&kConfig);
  }
  ~TileScope() { _tile_release(); }
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

// GCC writes the tile loads as asm statements that do not say they read memory: this barrier
// keeps the stores ahead of it (queries, probabilities, rescaled outputs) ahead of the loads.
[[gnu::always_inline]] inline void order_stores_before_tile_loads() { asm volatile("" ::: "memory"); }

// The n keys of a block (key j at k + j * ldk, d elements) as the B operands of Q K^T: for each
// reduction step c over the head dim and key tile t, one tile whose row r holds dims 32 c + 2 r
// and 32 c + 2 r + 1 of the tile's 16 keys; zero past d and past n.
void pack_keys_amx(const std::uint16_t* k, int64_t ldk, int64_t n, int64_t d, std::uint16_t* dst) {
  std::fill(dst, dst + attention_amx_dim(d) / kTileDepth * kBlockKeyTiles * kTileElements, std::uint16_t{0});
  for (int64_t j = 0; j < n; ++j) {
    const std::uint16_t* key = k + j * ldk;
    std::uint16_t* tile_column = dst + (j / kTileRows) * kTileElements + (j % kTileRows) * 2;
    for (int64_t c = 0; c < d; ++c) {
      tile_column[(c / kTileDepth) * kBlockKeyTiles * kTileElements + (c % kTileDepth) / 2 * kTileDepth + c % 2] =
          key[c];
    }
  }
}

// The n values of a block (value j at v + j * ldv, d elements) as the B operands of P V: for each
// reduction step s over the block's keys and column tile u, one tile whose row r holds keys
// 32 s + 2 r and 32 s + 2 r + 1 of the tile's 16 head dims; zero past d and past n.
void pack_values_amx(const std::uint16_t* v, int64_t ldv, int64_t n, int64_t d, std::uint16_t* dst) {
  const int64_t column_tiles = attention_amx_dim(d) / kTileRows;
  std::fill(dst, dst + kBlockKeySteps * column_tiles * kTileElements, std::uint16_t{0});
  for (int64_t j = 0; j < n; ++j) {
    const std::uint16_t* value = v + j * ldv;
    std::uint16_t* tile_row =
        dst + (j / kTileDepth) * column_tiles * kTileElements + (j % kTileDepth) / 2 * kTileDepth + j % 2;
    for (int64_t c = 0; c < d; ++c) tile_row[(c / kTileRows) * kTileElements + (c % kTileRows) * 2] = value[c];
  }
}

// kt and v as the amx table's attention_pack leaves them for bfloat16: block b's keys and values
// at the float32 layout's offsets of block b (they take fewer bytes).
void attention_pack_amx(const AttentionArgs& a, int64_t b, int64_t kvh, int64_t block0, int64_t block1, float* kt,
                        float* v) {
  const int64_t d = a.head_dim, dp = attention_padded_dim(d), ld = a.kv_heads * d;
  const int64_t head = (b * a.kv_len * a.kv_heads + kvh) * d;
  const auto* ks = static_cast<const std::uint16_t*>(a.k) + head;
  const auto* vs = static_cast<const std::uint16_t*>(a.v) + head;
  for (int64_t block = block0; block < block1; ++block) {
    const int64_t j0 = block * kKeyBlock, n = std::min(kKeyBlock, a.kv_len - j0);
    pack_keys_amx(ks + j0 * ld, ld, n, d, reinterpret_cast<std::uint16_t*>(kt + block * dp * kKeyBlock));
    pack_values_amx(vs + j0 * ld, ld, n, d, reinterpret_cast<std::uint16_t*>(v + block * dp * kKeyBlock));
  }
}

// s[rows_p][kAmxKeys] = q k^T for rows_p (a multiple of 32) bfloat16 query rows of da elements
// (q's row stride) against the key tiles [0, key_tiles) (an even count) of packed blocks
// keys(0) and keys(1), pack_keys_amx's layout; the other columns of s are left as they were.
template <class Keys>
void score_block_amx(const std::uint16_t* q, int64_t rows_p, int64_t da, Keys&& keys, int64_t key_tiles, float* s) {
  const int64_t steps = da / kTileDepth, ldq = da * 2, lds = kAmxKeys * 4;
  order_stores_before_tile_loads();
  for (int64_t r = 0; r < rows_p; r += 2 * kTileRows) {
    for (int64_t t = 0; t < key_tiles; t += 2) {
      const std::uint16_t* block = keys(t / kBlockKeyTiles) + (t % kBlockKeyTiles) * kTileElements;
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t c = 0; c < steps; ++c) {
        _tile_loadd(4, q + r * da + c * kTileDepth, ldq);
        _tile_loadd(5, q + (r + kTileRows) * da + c * kTileDepth, ldq);
        _tile_loadd(6, block + c * kBlockKeyTiles * kTileElements, kTileBytes);
        _tile_loadd(7, block + (c * kBlockKeyTiles + 1) * kTileElements, kTileBytes);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      float* out = s + r * kAmxKeys + t * kTileRows;
      _tile_stored(0, out, lds);
      _tile_stored(1, out + kTileRows, lds);
      _tile_stored(2, out + kTileRows * kAmxKeys, lds);
      _tile_stored(3, out + kTileRows * kAmxKeys + kTileRows, lds);
    }
  }
}

// softmax_block's emit for the tiles: each probability as two bfloat16 terms whose sum holds 16
// of its 24 significant bits, p_hi = p rounded and p_lo = (p - p_hi) rounded, into
// [rows_p][kAmxKeys] each (p_lo right after p_hi). One bfloat16 term alone would cost an output
// up to 2^-9 of its largest value, far more than the float32 path's rounding.
struct SplitProbabilities {
  std::uint16_t* p_hi;
  int64_t rows_p;
  [[gnu::always_inline]] void operator()(int64_t r, int64_t j, Vf::R p) const {
    const __m256i hi = (__m256i)_mm512_cvtneps_pbh(p);
    const __m256i lo = (__m256i)_mm512_cvtneps_pbh(Vf::sub(p, Vf::from_bf16(hi)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p_hi + r * kAmxKeys + j), hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p_hi + (rows_p + r) * kAmxKeys + j), lo);
  }
};

// o[rows_p][da] += (p_hi + p_lo) v for rows_p (a multiple of 32) rows of probabilities as
// SplitProbabilities leaves them and the key steps [0, key_steps) of packed value blocks
// values(0) and values(1) (pack_values_amx's layout); later keys' probabilities are 0.
template <class Values>
void value_block_amx(const std::uint16_t* p_hi, int64_t rows_p, int64_t da, Values&& values, int64_t key_steps,
                     float* o) {
  const int64_t column_tiles = da / kTileRows, ldo = da * 4, ldp = kAmxKeys * 2;
  order_stores_before_tile_loads();
  for (int64_t r = 0; r < rows_p; r += 2 * kTileRows) {
    for (int64_t u = 0; u < column_tiles; u += 2) {
      float* out = o + r * da + u * kTileRows;
      _tile_loadd(0, out, ldo);
      _tile_loadd(1, out + kTileRows, ldo);
      _tile_loadd(2, out + kTileRows * da, ldo);
      _tile_loadd(3, out + kTileRows * da + kTileRows, ldo);
      for (int64_t c = 0; c < key_steps; ++c) {
        const std::uint16_t* v = values(c / kBlockKeySteps) + ((c % kBlockKeySteps) * column_tiles + u) * kTileElements;
        _tile_loadd(6, v, kTileBytes);
        _tile_loadd(7, v + kTileElements, kTileBytes);
        for (const std::uint16_t* p : {p_hi, p_hi + rows_p * kAmxKeys}) {
          _tile_loadd(4, p + r * kAmxKeys + c * kTileDepth, ldp);
          _tile_loadd(5, p + (r + kTileRows) * kAmxKeys + c * kTileDepth, ldp);
          _tile_dpbf16ps(0, 4, 6);
          _tile_dpbf16ps(1, 4, 7);
          _tile_dpbf16ps(2, 5, 6);
          _tile_dpbf16ps(3, 5, 7);
        }
      }
      _tile_stored(0, out, ldo);
      _tile_stored(1, out + kTileRows, ldo);
      _tile_stored(2, out + kTileRows * da, ldo);
      _tile_stored(3, out + kTileRows * da + kTileRows, ldo);
    }
  }
}

// attention_rows for bfloat16 on tiles: the queries copied as they are (the scale applies in the
// softmax, in float32), blocks packed by attention_pack_amx and taken kAmxKeys keys (two packed
// blocks) at a time; scratch as attention_rows_scratch counts its AMX layout.
void attention_rows_amx(const AttentionArgs& a, int64_t b, int64_t kvh, int64_t i0, int64_t i1, const float* kt,
                        const float* vb, float* scratch) {
  const int64_t group = a.heads / a.kv_heads, d = a.head_dim, dp = attention_padded_dim(d);
  const int64_t da = attention_amx_dim(d), rows = (i1 - i0) * group, rows_p = attention_amx_rows(rows);
  auto* q = reinterpret_cast<std::uint16_t*>(scratch);                // [rows_p][da]
  float* o = scratch + rows_p * da / 2;                               // [rows_p][da]
  float* s = o + rows_p * da;                                         // [rows_p][kAmxKeys]
  auto* p = reinterpret_cast<std::uint16_t*>(s + rows_p * kAmxKeys);     // [2][rows_p][kAmxKeys]
  float* m = s + 2 * rows_p * kAmxKeys;
  float* l = m + rows_p;
  const auto* qs = static_cast<const std::uint16_t*>(a.q);
  std::fill(q, q + rows_p * da, std::uint16_t{0});
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r / group, h = kvh * group + r % group;
    std::copy_n(qs + ((b * a.q_len + i) * a.heads + h) * d, d, q + r * da);
  }
  // Packed block `half` (0 or 1) of the keys or values from key kAmxKeys * block on.
  const auto packed = [dp](const float* base, int64_t block) {
    return [base, block, dp](int64_t half) {
      return reinterpret_cast<const std::uint16_t*>(base + (2 * block + half) * dp * kKeyBlock);
    };
  };
  const TileScope tiles;
  online_softmax_rows<BFloat16, kAmxKeys>(
      a, b, kvh, i0, i1, rows_p, static_cast<float>(a.scale), s, o, da, m, l,
      [&](int64_t block, int64_t n) {
        score_block_amx(q, rows_p, da, packed(kt, block), (n + 2 * kTileRows - 1) / (2 * kTileRows) * 2, s);
      },
      SplitProbabilities{p, rows_p},
      [&](int64_t block, int64_t n) {
        value_block_amx(p, rows_p, da, packed(vb, block), (n + kTileDepth - 1) / kTileDepth, o);
      });
}

}  // namespace
}  // namespace tileops::cpu
