// The cpu attention kernels (prefill, decode over contiguous and paged caches, cache appends)
// against attention computed here in double, on every instruction set and float dtype.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Scores {
  double scale;
  double softcap;
};

// Attention of query row q over the keys [lo, hi) (key(j), value(j): d doubles each) in double:
// adds the output to o and returns the log-sum-exp (-inf, o untouched, when none is visible).
template <class Key, class Value>
double attend(const double* q, int64_t d, int64_t lo, int64_t hi, Scores sc, Key key, Value value, double* o) {
  if (hi <= lo) return -kInf;
  std::vector<double> s;
  double max = -kInf;
  for (int64_t j = lo; j < hi; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += q[c] * key(j)[c];
    dot *= sc.scale;
    if (sc.softcap > 0) dot = sc.softcap * std::tanh(dot / sc.softcap);
    s.push_back(dot);
    max = std::max(max, dot);
  }
  double sum = 0;
  for (double x : s) sum += std::exp(x - max);
  for (int64_t j = lo; j < hi; ++j) {
    const double w = std::exp(s[j - lo] - max) / sum;
    for (int64_t c = 0; c < d; ++c) o[c] += w * value(j)[c];
  }
  return max + std::log(sum);
}

struct Prefill {
  int64_t batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal = false;
  int64_t window = -1;
  double softcap = 0;
};

struct Expected {
  std::vector<double> o, lse;
};

Expected prefill_in_double(const Prefill& p, const Buffer& qb, const Buffer& kb, const Buffer& vb) {
  const std::vector<double> q = qb.values(), k = kb.values(), v = vb.values();
  const int64_t d = p.head_dim, group = p.heads / p.kv_heads;
  Expected e{std::vector<double>(q.size(), 0.0), std::vector<double>(static_cast<std::size_t>(p.batch * p.heads * p.q_len))};
  const Scores sc{1.0 / std::sqrt(static_cast<double>(d)), p.softcap};
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t i = 0; i < p.q_len; ++i) {
      const int64_t diag = i + p.kv_len - p.q_len;
      const int64_t lo = p.window >= 0 ? std::max<int64_t>(0, diag - p.window) : 0;
      const int64_t hi = p.causal ? std::clamp<int64_t>(diag + 1, 0, p.kv_len) : p.kv_len;
      for (int64_t h = 0; h < p.heads; ++h) {
        const int64_t row = (b * p.q_len + i) * p.heads + h, kvh = h / group;
        const auto at = [&](const std::vector<double>& x) {
          return [&, kvh](int64_t j) { return &x[static_cast<std::size_t>(((b * p.kv_len + j) * p.kv_heads + kvh) * d)]; };
        };
        e.lse[(b * p.heads + h) * p.q_len + i] = attend(&q[row * d], d, lo, hi, sc, at(k), at(v), &e.o[row * d]);
      }
    }
  }
  return e;
}

void check_prefill(const Prefill& p, DType dtype) {
  INFO(name_of(dtype), " batch ", p.batch, " q_len ", p.q_len, " kv_len ", p.kv_len, " heads ", p.heads, "/",
       p.kv_heads, " d ", p.head_dim, " causal ", p.causal, " window ", p.window, " softcap ", p.softcap);
  const Buffer q = random_buffer(dtype, p.batch * p.q_len * p.heads * p.head_dim, -2, 2, 1);
  const Buffer k = random_buffer(dtype, p.batch * p.kv_len * p.kv_heads * p.head_dim, -2, 2, 2);
  const Buffer v = random_buffer(dtype, p.batch * p.kv_len * p.kv_heads * p.head_dim, -1, 1, 3);
  Buffer o(dtype, q.size());
  Buffer lse(DType::float32, p.batch * p.heads * p.q_len);
  AttentionArgs a;
  a.batch = p.batch;
  a.q_len = p.q_len;
  a.kv_len = p.kv_len;
  a.heads = p.heads;
  a.kv_heads = p.kv_heads;
  a.head_dim = p.head_dim;
  a.causal = p.causal;
  a.window_left = p.window;
  a.scale = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  a.softcap = p.softcap;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.o = o.data();
  a.lse = static_cast<float*>(lse.data());
  attention(dtype, a);
  const Expected e = prefill_in_double(p, q, k, v);
  check_close(o, e.o, tolerance(dtype));
  check_close(lse, e.lse, 1e-5);
}

}  // namespace

TEST_CASE("attention matches a double loop: causal and not, fewer or more queries than keys, GQA ratios 1, 4 and 8") {
  const std::vector<Prefill> problems = {
      {2, 17, 17, 4, 4, 64, true},    {1, 17, 100, 8, 2, 128, true}, {1, 100, 17, 8, 1, 64, true},
      {2, 33, 65, 8, 1, 128, false},  {1, 1, 1, 4, 1, 64, true},     {3, 1, 130, 4, 1, 128, false},
  };
  for_each_attention_isa([&](Isa) {
    for (DType dtype : kFloatTypes) {
      for (const Prefill& p : problems) check_prefill(p, dtype);
    }
  });
}

TEST_CASE("attention takes any even head dim up to 256, also not a multiple of the vector width or the tile row") {
  for_each_attention_isa([](Isa) {
    for (DType dtype : {DType::float32, DType::bfloat16}) {
      for (int64_t d : {2, 6, 72, 130, 256}) check_prefill({1, 19, 23, 4, 2, d, true}, dtype);
    }
  });
}

TEST_CASE("attention applies the left window, with and without the causal mask, and the soft cap") {
  const std::vector<Prefill> problems = {
      {1, 100, 130, 4, 2, 64, true, 10},    {1, 70, 70, 4, 1, 64, false, 5},   {1, 70, 70, 4, 1, 64, false, 5, 5.0},
      {2, 40, 40, 8, 2, 128, true, -1, 2.0}, {1, 64, 64, 4, 4, 64, true, 0},
  };
  for_each_attention_isa([&](Isa) {
    for (DType dtype : kFloatTypes) {
      for (const Prefill& p : problems) check_prefill(p, dtype);
    }
  });
}

TEST_CASE("attention at 1000 tokens, a length no block or task size divides") {
  for_each_attention_isa([](Isa) { check_prefill({1, 1000, 1000, 2, 1, 64, true}, DType::float32); });
  check_prefill({1, 1000, 1000, 8, 2, 128, true, 300}, DType::bfloat16);
}

TEST_CASE("attention rows that see no key give 0 and a log-sum-exp of -inf") {
  // 20 queries after 5 keys under the causal mask: the first 15 rows see none.
  for_each_attention_isa([](Isa) { check_prefill({1, 20, 5, 2, 1, 64, true}, DType::float32); });
  const Buffer q = random_buffer(DType::float32, 20 * 2 * 64, -1, 1, 4);
  const Buffer kv = random_buffer(DType::float32, 5 * 64, -1, 1, 5);
  Buffer o(DType::float32, q.size());
  Buffer lse(DType::float32, 2 * 20);
  AttentionArgs a;
  a.batch = 1;
  a.q_len = 20;
  a.kv_len = 5;
  a.heads = 2;
  a.kv_heads = 1;
  a.head_dim = 64;
  a.causal = true;
  a.q = q.data();
  a.k = kv.data();
  a.v = kv.data();
  a.o = o.data();
  a.lse = static_cast<float*>(lse.data());
  attention(DType::float32, a);
  CHECK(o.get(0) == 0.0);
  CHECK(lse.get(0) == -kInf);
  CHECK(lse.get(15) > -kInf);
}

TEST_CASE("attention refuses heads that are no multiple of the kv heads and head dims beyond 256") {
  AttentionArgs a;
  a.batch = 1;
  a.q_len = 1;
  a.kv_len = 1;
  a.heads = 6;
  a.kv_heads = 4;
  a.head_dim = 64;
  CHECK_THROWS_WITH_AS(attention(DType::float32, a), doctest::Contains("heads 6 is not a multiple of kv_heads 4"),
                       std::invalid_argument);
  a.kv_heads = 2;
  a.head_dim = 258;
  CHECK_THROWS_WITH_AS(attention(DType::float32, a), doctest::Contains("head_dim 258 is outside [1, 256]"),
                       std::invalid_argument);
  a.head_dim = 64;
  CHECK_THROWS_WITH_AS(attention(DType::int32, a), doctest::Contains("dtype int32 is not supported"),
                       std::invalid_argument);
}

namespace {

// A paged cache holding the sequences `lens` (pages shuffled, with spare pages), or a
// contiguous one when block_size is 0.
struct Cache {
  int64_t batch, kv_heads, head_dim, block_size, max_blocks, num_pages;
  std::vector<int32_t> lens, table;
  Buffer k, v;
};

Cache make_cache(DType dtype, const std::vector<int32_t>& lens, int64_t kv_heads, int64_t head_dim, int64_t block_size,
                 unsigned seed) {
  const auto batch = static_cast<int64_t>(lens.size());
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  const bool paged = block_size > 0;
  const int64_t bs = paged ? block_size : std::max<int64_t>(longest, 1);
  const int64_t max_blocks = paged ? (longest + bs - 1) / bs + 1 : 1;
  const int64_t num_pages = paged ? batch * max_blocks + 3 : batch;
  std::vector<int32_t> table;
  if (paged) {
    std::vector<int32_t> pages(static_cast<std::size_t>(num_pages));
    std::iota(pages.begin(), pages.end(), 0);
    std::shuffle(pages.begin(), pages.end(), std::mt19937(seed));
    table.assign(pages.begin(), pages.begin() + batch * max_blocks);
  }
  const int64_t numel = num_pages * bs * kv_heads * head_dim;
  return {batch, kv_heads, head_dim, bs, max_blocks, num_pages, lens, table,
          random_buffer(dtype, numel, -2, 2, seed + 1), random_buffer(dtype, numel, -1, 1, seed + 2)};
}

// Where key position j of sequence b starts in the cache, in elements.
int64_t key_offset(const Cache& c, int64_t b, int64_t j, int64_t kvh) {
  const int64_t page = c.table.empty() ? b : c.table[static_cast<std::size_t>(b * c.max_blocks + j / c.block_size)];
  return ((page * c.block_size + j % c.block_size) * c.kv_heads + kvh) * c.head_dim;
}

DecodeArgs decode_args(const Cache& c, int64_t heads, const Buffer& q, Buffer& o) {
  DecodeArgs a;
  a.batch = c.batch;
  a.heads = heads;
  a.kv_heads = c.kv_heads;
  a.head_dim = c.head_dim;
  a.scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  a.q = q.data();
  a.k = c.k.data();
  a.v = c.v.data();
  a.o = o.data();
  a.seqlens = c.lens.data();
  a.block_table = c.table.empty() ? nullptr : c.table.data();
  a.max_blocks = c.max_blocks;
  a.block_size = c.block_size;
  a.num_pages = c.num_pages;
  return a;
}

std::vector<double> decode_in_double(const DecodeArgs& a, const Cache& c, const Buffer& qb) {
  const std::vector<double> q = qb.values(), k = c.k.values(), v = c.v.values();
  const int64_t d = a.head_dim, group = a.heads / a.kv_heads;
  std::vector<double> o(q.size(), 0.0);
  for (int64_t b = 0; b < a.batch; ++b) {
    const int64_t len = c.lens[static_cast<std::size_t>(b)];
    const int64_t lo = a.window_left >= 0 ? std::max<int64_t>(0, len - 1 - a.window_left) : 0;
    for (int64_t h = 0; h < a.heads; ++h) {
      const auto at = [&](const std::vector<double>& x) {
        return [&, h](int64_t j) { return &x[static_cast<std::size_t>(key_offset(c, b, j, h / group))]; };
      };
      attend(&q[(b * a.heads + h) * d], d, lo, len, {a.scale, a.softcap}, at(k), at(v), &o[(b * a.heads + h) * d]);
    }
  }
  return o;
}

}  // namespace

TEST_CASE("decode over contiguous and paged caches (pages of 16 and 32) matches a double loop: ragged and empty sequences, windows, soft cap") {
  const std::vector<int32_t> lens = {0, 1, 17, 1000};
  for_each_attention_isa([&](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t block_size : {0, 16, 32}) {
        for (auto [window, softcap] : {std::pair<int64_t, double>{-1, 0.0}, {40, 0.0}, {-1, 5.0}}) {
          INFO(name_of(dtype), " block size ", block_size, " window ", window, " softcap ", softcap);
          const Cache c = make_cache(dtype, lens, 2, 128, block_size, 9);
          const Buffer q = random_buffer(dtype, 4 * 8 * 128, -2, 2, 4);
          Buffer o(dtype, q.size());
          DecodeArgs a = decode_args(c, 8, q, o);
          a.window_left = window;
          a.softcap = softcap;
          attention_decode(dtype, a);
          check_close(o, decode_in_double(a, c, q), tolerance(dtype));
        }
      }
    }
  });
}

TEST_CASE("decode of one long sequence is split over the threads and the parts combined exactly") {
  // One sequence and one kv head: the 3000 keys are split into parts, one per thread or more.
  for (int64_t block_size : {0, 16}) {
    const Cache c = make_cache(DType::float32, {3000}, 1, 64, block_size, 21);
    const Buffer q = random_buffer(DType::float32, 8 * 64, -2, 2, 5);
    Buffer o(DType::float32, q.size());
    const DecodeArgs a = decode_args(c, 8, q, o);
    attention_decode(DType::float32, a);
    check_close(o, decode_in_double(a, c, q), tolerance(DType::float32));
  }
}

TEST_CASE("decode of an empty batch writes nothing and reads no cache") {
  Cache c = make_cache(DType::float32, {5}, 1, 64, 16, 3);
  c.batch = 0;
  const Buffer q(DType::float32, 0);
  Buffer o(DType::float32, 0);
  DecodeArgs a = decode_args(c, 4, q, o);
  a.q = nullptr;
  a.o = nullptr;
  CHECK_NOTHROW(attention_decode(DType::float32, a));
}

TEST_CASE("decode refuses lengths beyond the cache and block-table entries outside the pages it reads") {
  Cache c = make_cache(DType::float32, {17, 40}, 1, 64, 16, 3);
  const Buffer q = random_buffer(DType::float32, 2 * 4 * 64, -1, 1, 6);
  Buffer o(DType::float32, q.size());
  c.lens[1] = static_cast<int32_t>(c.max_blocks * 16 + 1);
  CHECK_THROWS_WITH_AS(attention_decode(DType::float32, decode_args(c, 4, q, o)),
                       doctest::Contains("sequence 1 has length 65, beyond the 64 positions of its cache"),
                       std::invalid_argument);
  c.lens[1] = -1;
  CHECK_THROWS_WITH_AS(attention_decode(DType::float32, decode_args(c, 4, q, o)),
                       doctest::Contains("sequence 1 has length -1"), std::invalid_argument);
  c.lens[1] = 40;
  c.table[static_cast<std::size_t>(1 * c.max_blocks + 2)] = static_cast<int32_t>(c.num_pages);
  const std::string pages = std::to_string(c.num_pages);
  const std::string outside = "block_table[1, 2] = " + pages + " is outside [0, " + pages + ")";
  CHECK_THROWS_WITH_AS(attention_decode(DType::float32, decode_args(c, 4, q, o)), doctest::Contains(outside.c_str()),
                       std::invalid_argument);
  // The page after the last position is never read: any entry there is accepted.
  c.table[static_cast<std::size_t>(1 * c.max_blocks + 2)] = 0;
  c.table[static_cast<std::size_t>(1 * c.max_blocks + 3)] = -7;
  CHECK_NOTHROW(attention_decode(DType::float32, decode_args(c, 4, q, o)));
}

TEST_CASE("kv_cache_append writes the new tokens after the cached ones, in contiguous and paged caches") {
  for (int64_t block_size : {0, 16}) {
    INFO("block size ", block_size);
    const std::vector<int32_t> lens = {3, 0, 30};
    Cache c = make_cache(DType::bfloat16, {20, 20, 40}, 2, 64, block_size, 8);
    c.lens = lens;
    const int64_t added = 7, token = 2 * 64;
    const Buffer k_new = random_buffer(DType::bfloat16, 3 * added * token, -1, 1, 12);
    const Buffer v_new = random_buffer(DType::bfloat16, 3 * added * token, -1, 1, 13);
    const Buffer k_before = c.k, v_before = c.v;
    CacheAppendArgs a;
    a.batch = 3;
    a.added = added;
    a.kv_heads = 2;
    a.head_dim = 64;
    a.k_pages = c.k.data();
    a.v_pages = c.v.data();
    a.k_new = k_new.data();
    a.v_new = v_new.data();
    a.seqlens = c.lens.data();
    a.block_table = c.table.empty() ? nullptr : c.table.data();
    a.max_blocks = c.max_blocks;
    a.block_size = c.block_size;
    a.num_pages = c.num_pages;
    kv_cache_append(DType::bfloat16, a);
    std::vector<double> want_k = k_before.values(), want_v = v_before.values();
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t t = 0; t < added; ++t) {
        for (int64_t e = 0; e < token; ++e) {
          const auto dst = static_cast<std::size_t>(key_offset(c, b, lens[static_cast<std::size_t>(b)] + t, 0) + e);
          want_k[dst] = k_new.get((b * added + t) * token + e);
          want_v[dst] = v_new.get((b * added + t) * token + e);
        }
      }
    }
    check_close(c.k, want_k, 0.0, 0.0);
    check_close(c.v, want_v, 0.0, 0.0);
  }
}

TEST_CASE("kv_cache_append keeps the later of two tokens that land on one slot, and refuses overflowing sequences") {
  // Both sequences' first page is page 0: sequence 1's token is written last and stays.
  std::vector<int32_t> lens = {0, 0};
  std::vector<int32_t> table = {0, 0};
  Buffer k(DType::float32, 4 * 2), v(DType::float32, 4 * 2);
  Buffer k_new(DType::float32, 2 * 2), v_new(DType::float32, 2 * 2);
  for (int64_t i = 0; i < 4; ++i) k_new.set(i, static_cast<double>(i + 1));
  CacheAppendArgs a;
  a.batch = 2;
  a.added = 1;
  a.kv_heads = 1;
  a.head_dim = 2;
  a.k_pages = k.data();
  a.v_pages = v.data();
  a.k_new = k_new.data();
  a.v_new = v_new.data();
  a.seqlens = lens.data();
  a.block_table = table.data();
  a.max_blocks = 1;
  a.block_size = 4;
  a.num_pages = 2;
  kv_cache_append(DType::float32, a);
  CHECK(k.get(0) == 3.0);
  CHECK(k.get(1) == 4.0);
  lens[1] = 4;
  CHECK_THROWS_WITH_AS(kv_cache_append(DType::float32, a),
                       doctest::Contains("sequence 1 has length 4 and 1 new tokens, beyond the 4 positions of its cache"),
                       std::invalid_argument);
  lens[1] = 0;
  table[1] = 2;
  CHECK_THROWS_WITH_AS(kv_cache_append(DType::float32, a), doctest::Contains("block_table[1, 0] = 2 is outside [0, 2)"),
                       std::invalid_argument);
}
