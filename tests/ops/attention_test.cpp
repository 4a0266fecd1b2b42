// The attention ops (manifests/attention.yaml). The reference kernels against attention composed
// of GemmFwdOp and SoftmaxFwdOp and against each other (a decode is the last row of a prefill,
// a paged cache the same keys as a contiguous one); the ops as they run by default (the cpu
// plugin's kernels) against the reference target on the manifest's workload rows, scaled and
// varied over masks, GQA ratios, head dims and lengths; and the refusals of bad shapes and of
// lengths and block-table entries that would read or write outside the cache. Every row also
// runs unchanged in numerics_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "signature/signature_plan.hpp"
#include "support/attention_cases.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/attention.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/testing.hpp"

using namespace tileops;

namespace {

const Target kReference = std::string(REFERENCE);

using testing::int32s;
using testing::uniform;

void check_same(const Tensor& got, const Tensor& want, const std::string& what) {
  const testing::Comparison c = testing::compare(got, want);
  CHECK_MESSAGE(c.ok, what << ": max abs " << c.max_abs << ", max rel " << c.max_rel);
}

// The workload case of `op` labelled `label`, its indices capped at `cap`.
WorkloadCase row(const std::string& op, const std::string& label, std::int64_t cap) {
  const auto capped = [cap](std::string_view, std::int64_t v) { return std::min(v, cap); };
  for (const WorkloadCase& c : SignaturePlan::for_op(op)->workload_cases(capped)) {
    if (c.label == label) return c;
  }
  FAIL("no workload " << label << " of " << op);
  return {};
}

using testing::PrefillCase;

void check_prefill(const PrefillCase& p) { testing::check_prefill(p, Device::cpu()); }

}  // namespace

TEST_CASE("the attention reference equals GemmFwdOp, SoftmaxFwdOp and GemmFwdOp composed per head") {
  const std::int64_t sq = 9, skv = 13, d = 16;
  const Tensor q = uniform({1, sq, 2, d}, DType::float32, 4);
  const Tensor k = uniform({1, skv, 2, d}, DType::float32, 5);
  const Tensor v = uniform({1, skv, 2, d}, DType::float32, 6);
  const double scale = 0.3;
  const Tensor o = GroupedQueryAttentionFwdOp(false, scale, -1, std::nullopt, false, kReference)(q, k, v).o;
  GemmFwdOp qk(false, true, kReference), pv(false, false, kReference);
  SoftmaxFwdOp softmax(-1, kReference);
  const std::vector<double> qs = q.to_doubles(), ks = k.to_doubles(), vs = v.to_doubles(), os = o.to_doubles();
  for (std::int64_t h = 0; h < 2; ++h) {
    // One head's rows, q scaled before the product.
    const auto head = [&](const std::vector<double>& x, std::int64_t rows, double factor) {
      std::vector<double> out;
      for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t c = 0; c < d; ++c) out.push_back(factor * x[static_cast<std::size_t>((i * 2 + h) * d + c)]);
      }
      return Tensor::from_doubles(out, {rows, d}, DType::float32);
    };
    const Tensor composed = pv(softmax(qk(head(qs, sq, scale), head(ks, skv, 1.0))), head(vs, skv, 1.0));
    check_same(head(os, sq, 1.0), composed, "head " + std::to_string(h));
  }
}

TEST_CASE("the attention reference gives a causal first row the first value, and a row that sees no key 0 and lse -inf") {
  const Tensor q = uniform({1, 3, 1, 4}, DType::float32, 7);
  const Tensor k = uniform({1, 2, 1, 4}, DType::float32, 8);
  const Tensor v = uniform({1, 2, 1, 4}, DType::float32, 9);
  // Three queries after two keys: row 0 sees none, row 1 sees key 0 only, row 2 both.
  const auto r = GroupedQueryAttentionFwdOp(true, std::nullopt, -1, std::nullopt, true, kReference)(q, k, v);
  const std::vector<double> o = r.o.to_doubles(), vs = v.to_doubles(), lse = r.lse.to_doubles();
  for (int c = 0; c < 4; ++c) {
    CHECK(o[static_cast<std::size_t>(c)] == 0.0);
    CHECK(o[static_cast<std::size_t>(4 + c)] == doctest::Approx(vs[static_cast<std::size_t>(c)]));
  }
  CHECK(lse[0] == -std::numeric_limits<double>::infinity());
  CHECK(std::isfinite(lse[2]));
}

TEST_CASE("attention on the cpu matches the reference on every prefill workload row, causal and not, with a window, a soft cap and fewer queries than keys") {
  load_backends();
  for (const WorkloadCase& c : SignaturePlan::for_op("GroupedQueryAttentionFwdOp")->workload_cases(
           [](std::string_view, std::int64_t v) { return std::min<std::int64_t>(v, 24); })) {
    CAPTURE(c.id);
    const Shape& q = c.inputs[0]->shape;
    const Shape& kv = c.inputs[1]->shape;
    const PrefillCase base{q[0], q[1], kv[1], q[2], kv[2], q[3]};
    for (bool causal : {true, false}) {
      PrefillCase p = base;
      p.causal = causal;
      p.dtype = c.inputs[0]->dtype;
      check_prefill(p);
      p.q_len = 17;  // a chunk after 7 cached tokens
      check_prefill(p);
      p.window = 7;
      check_prefill(p);
      p.softcap = 30.0;
      check_prefill(p);
    }
  }
}

TEST_CASE("attention on the cpu matches the reference at GQA ratios 1, 4 and 8, head dims 64 and 128, and lengths 1, 17 and 1000") {
  load_backends();
  for (auto [heads, kv_heads] : {std::pair<std::int64_t, std::int64_t>{8, 8}, {8, 2}, {8, 1}}) {
    for (std::int64_t d : {64, 128}) {
      for (std::int64_t len : {1, 17}) check_prefill({2, len, len, heads, kv_heads, d});
    }
  }
  check_prefill({1, 1000, 1000, 2, 1, 64, true, -1, std::nullopt, DType::float16});
  check_prefill({1, 1, 1000, 8, 1, 128, true, 100, std::nullopt, DType::float32});
}

TEST_CASE("attention of an empty batch or empty sequences returns empty outputs") {
  load_backends();
  GroupedQueryAttentionFwdOp op(true, std::nullopt, -1, std::nullopt, true);
  const auto r = op(uniform({0, 5, 4, 64}, DType::float32, 1), uniform({0, 5, 2, 64}, DType::float32, 2),
                    uniform({0, 5, 2, 64}, DType::float32, 3));
  CHECK(r.o.shape() == Shape{0, 5, 4, 64});
  CHECK(r.lse.shape() == Shape{0, 4, 5});
  // No keys at all: every row sees none.
  const auto none = op(uniform({1, 3, 4, 64}, DType::float32, 1), uniform({1, 0, 2, 64}, DType::float32, 2),
                       uniform({1, 0, 2, 64}, DType::float32, 3));
  for (double x : none.o.to_doubles()) CHECK(x == 0.0);
  for (double x : none.lse.to_doubles()) CHECK(x == -std::numeric_limits<double>::infinity());
}

TEST_CASE("attention checks the manifest's rules: H a multiple of Hkv, an even head dim up to 256, a window of -1 or more, a positive soft cap") {
  GroupedQueryAttentionFwdOp op;
  const auto call = [&](std::int64_t heads, std::int64_t kv_heads, std::int64_t d) {
    op(Tensor::zeros({1, 2, heads, d}, DType::float32), Tensor::zeros({1, 2, kv_heads, d}, DType::float32),
       Tensor::zeros({1, 2, kv_heads, d}, DType::float32));
  };
  CHECK_THROWS_WITH_AS(call(6, 4, 64), doctest::Contains("the query heads H must be a positive multiple of the key/value heads Hkv"),
                       ValueError);
  CHECK_THROWS_WITH_AS(call(4, 2, 63), doctest::Contains("the head dim D must be even, from 2 to 256"), ValueError);
  CHECK_THROWS_WITH_AS(call(4, 2, 258), doctest::Contains("the head dim D must be even, from 2 to 256"), ValueError);
  CHECK_THROWS_WITH_AS(GroupedQueryAttentionFwdOp(true, std::nullopt, -2), doctest::Contains("window_size_left must be -1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(GroupedQueryAttentionFwdOp(true, std::nullopt, -1, 0.0), doctest::Contains("softcap must be positive"),
                       ValueError);
  CHECK_THROWS_WITH_AS(GroupedQueryAttentionFwdOp(true, -1.0), doctest::Contains("sm_scale must be positive"), ValueError);
}

namespace {

// The keys [0, len) of sequence b of a contiguous cache, as a [1, len, Hkv, D] tensor.
Tensor prefix(const Tensor& cache, std::int64_t b, std::int64_t len) {
  const Shape& s = cache.shape();
  const std::int64_t token = s[2] * s[3];
  const std::vector<double> all = cache.to_doubles();
  const auto first = all.begin() + b * s[1] * token;
  return Tensor::from_doubles(std::vector<double>(first, first + len * token), {1, len, s[2], s[3]}, cache.dtype());
}

}  // namespace

TEST_CASE("decode over a contiguous and a paged cache (pages of 16 and 32) matches the reference: ragged lengths, empty sequences, windows, soft cap") {
  load_backends();
  const WorkloadCase c = row("GroupedQueryAttentionDecodeFwdOp", "llama3-8b-b32-4k", 48);
  const std::int64_t heads = c.inputs[0]->shape[1], kv_heads = c.inputs[1]->shape[2], d = c.inputs[0]->shape[2];
  const std::vector<int> lens = {0, 1, 17, 48, 33};
  for (std::int64_t block_size : {16, 32}) {
    const testing::KvCaches caches = testing::make_kv_caches(lens, 48, kv_heads, d, block_size, DType::bfloat16);
    const Tensor q = uniform({5, heads, d}, DType::bfloat16, 13);
    for (auto [window, softcap] : {std::pair<std::int64_t, std::optional<double>>{-1, std::nullopt}, {9, std::nullopt}, {-1, 20.0}}) {
      INFO("block size ", block_size, " window ", window);
      GroupedQueryAttentionDecodeFwdOp decode(std::nullopt, window, softcap);
      GroupedQueryAttentionPagedDecodeFwdOp paged(std::nullopt, window, softcap);
      const Tensor want = GroupedQueryAttentionDecodeFwdOp(std::nullopt, window, softcap, kReference)(q, caches.k, caches.v, caches.lens);
      check_same(decode(q, caches.k, caches.v, caches.lens), want, "contiguous");
      check_same(paged(q, caches.k_pages, caches.v_pages, caches.table, caches.lens), want, "paged");
      check_same(GroupedQueryAttentionPagedDecodeFwdOp(std::nullopt, window, softcap, kReference)(
                     q, caches.k_pages, caches.v_pages, caches.table, caches.lens),
                 want, "paged reference");
    }
  }
}

TEST_CASE("a decode step is the last row of a causal prefill over the sequence's cached keys") {
  load_backends();
  const std::vector<int> lens = {1, 17, 40};
  const testing::KvCaches caches = testing::make_kv_caches(lens, 40, 2, 64, 16, DType::float32);
  const Tensor q = uniform({3, 8, 64}, DType::float32, 14);
  const std::vector<double> qs = q.to_doubles();
  const Tensor o = GroupedQueryAttentionDecodeFwdOp(std::nullopt, 5)(q, caches.k, caches.v, caches.lens);
  const std::vector<double> os = o.to_doubles();
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int64_t len = lens[static_cast<std::size_t>(b)];
    const Tensor qb = Tensor::from_doubles(std::vector<double>(qs.begin() + b * 8 * 64, qs.begin() + (b + 1) * 8 * 64),
                                           {1, 1, 8, 64}, DType::float32);
    const Tensor want = GroupedQueryAttentionFwdOp(true, std::nullopt, 5, std::nullopt, false, kReference)(
                            qb, prefix(caches.k, b, len), prefix(caches.v, b, len))
                            .o;
    const Tensor got = Tensor::from_doubles(std::vector<double>(os.begin() + b * 8 * 64, os.begin() + (b + 1) * 8 * 64),
                                            {1, 1, 8, 64}, DType::float32);
    check_same(got, want, "sequence " + std::to_string(b));
  }
}

TEST_CASE("decode of an empty batch returns an empty output") {
  load_backends();
  const Tensor o = GroupedQueryAttentionPagedDecodeFwdOp()(uniform({0, 8, 64}, DType::float32, 1),
                                                           uniform({4, 16, 2, 64}, DType::float32, 2),
                                                           uniform({4, 16, 2, 64}, DType::float32, 3),
                                                           int32s({}, {0, 3}), int32s({}, {0}));
  CHECK(o.shape() == Shape{0, 8, 64});
}

TEST_CASE("appending to a cache then decoding equals attending over the whole sequence") {
  load_backends();
  for (bool paged : {false, true}) {
    INFO("paged ", paged);
    const std::int64_t smax = 64, prompt = 37;
    const Tensor k_all = uniform({1, prompt + 1, 2, 64}, DType::bfloat16, 15);
    const Tensor v_all = uniform({1, prompt + 1, 2, 64}, DType::bfloat16, 16);
    const Tensor q = uniform({1, 8, 64}, DType::bfloat16, 17);
    const auto token = [&](const Tensor& all, std::int64_t from, std::int64_t count) {
      const std::vector<double> x = all.to_doubles();
      return Tensor::from_doubles(std::vector<double>(x.begin() + from * 128, x.begin() + (from + count) * 128),
                                  {1, count, 2, 64}, DType::bfloat16);
    };
    Tensor o;
    if (paged) {
      const Tensor k = Tensor::zeros({6, 16, 2, 64}, DType::bfloat16), v = Tensor::zeros({6, 16, 2, 64}, DType::bfloat16);
      const Tensor table = int32s({4, 0, 5, 2}, {1, 4});
      PagedKVCacheAppendFwdOp append;
      append(k, v, token(k_all, 0, prompt), token(v_all, 0, prompt), table, int32s({0}, {1}));
      append(k, v, token(k_all, prompt, 1), token(v_all, prompt, 1), table, int32s({prompt}, {1}));
      o = GroupedQueryAttentionPagedDecodeFwdOp()(q, k, v, table, int32s({prompt + 1}, {1}));
    } else {
      const Tensor k = Tensor::zeros({1, smax, 2, 64}, DType::bfloat16), v = Tensor::zeros({1, smax, 2, 64}, DType::bfloat16);
      KVCacheAppendFwdOp append;
      append(k, v, token(k_all, 0, prompt), token(v_all, 0, prompt), int32s({0}, {1}));
      append(k, v, token(k_all, prompt, 1), token(v_all, prompt, 1), int32s({prompt}, {1}));
      o = GroupedQueryAttentionDecodeFwdOp()(q, k, v, int32s({prompt + 1}, {1}));
    }
    const Tensor want = GroupedQueryAttentionFwdOp(true, std::nullopt, -1, std::nullopt, false, kReference)(
                            Tensor::from_doubles(q.to_doubles(), {1, 1, 8, 64}, DType::bfloat16), k_all, v_all)
                            .o;
    check_same(Tensor::from_doubles(o.to_doubles(), {1, 1, 8, 64}, DType::bfloat16), want, "o");
  }
}

TEST_CASE("decode refuses sequence lengths outside the cache, naming the sequence, the length and the capacity") {
  const Tensor q = Tensor::zeros({2, 4, 64}, DType::float32);
  const Tensor k = Tensor::zeros({2, 64, 2, 64}, DType::float32), v = Tensor::zeros({2, 64, 2, 64}, DType::float32);
  for (const Target& target : {Target(), kReference}) {
    GroupedQueryAttentionDecodeFwdOp op(std::nullopt, -1, std::nullopt, target);
    CHECK_THROWS_WITH_AS(op(q, k, v, int32s({3, 65}, {2})),
                         doctest::Contains("GroupedQueryAttentionDecodeFwdOp: cache_seqlens[1] = 65 is outside [0, 64]: a "
                                           "sequence holds from 0 to Smax = 64 positions"),
                         ValueError);
    CHECK_THROWS_WITH_AS(op(q, k, v, int32s({-1, 2}, {2})), doctest::Contains("cache_seqlens[0] = -1 is outside [0, 64]"),
                         ValueError);
  }
}

TEST_CASE("paged decode refuses block-table entries outside the pages for the pages a sequence reads, and ignores the others") {
  const Tensor q = Tensor::zeros({2, 4, 64}, DType::float32);
  const Tensor pages = Tensor::zeros({12, 16, 2, 64}, DType::float32), values = Tensor::zeros({12, 16, 2, 64}, DType::float32);
  for (const Target& target : {Target(), kReference}) {
    GroupedQueryAttentionPagedDecodeFwdOp op(std::nullopt, -1, std::nullopt, target);
    CHECK_THROWS_WITH_AS(op(q, pages, values, int32s({0, 99, -1, -1, 3, 4, 5, -1}, {2, 4}), int32s({20, 40}, {2})),
                         doctest::Contains("block_table[0, 1] = 99 names no page: expected 0 to 11 (NB = 12) for the page "
                                           "holding positions 16 to 19 of sequence 0"),
                         ValueError);
    CHECK_THROWS_WITH_AS(op(q, pages, values, int32s({0, 1, -1, -1, 3, -4, 5, -1}, {2, 4}), int32s({20, 40}, {2})),
                         doctest::Contains("block_table[1, 1] = -4 names no page"), ValueError);
    CHECK_THROWS_WITH_AS(op(q, pages, values, int32s({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}), int32s({20, 65}, {2})),
                         doctest::Contains("cache_seqlens[1] = 65 is outside [0, 64]: a sequence holds from 0 to MB * BS = 64 "
                                           "positions"),
                         ValueError);
    // Entries past a sequence's last page (here -1 padding) are never read.
    CHECK_NOTHROW(op(q, pages, values, int32s({0, 1, -1, -1, 3, 4, 5, -1}, {2, 4}), int32s({20, 40}, {2})));
  }
}

TEST_CASE("the appends refuse new tokens past the cache's end or onto pages outside it, and write nothing then") {
  const Tensor k = Tensor::zeros({1, 64, 2, 64}, DType::float32), v = Tensor::zeros({1, 64, 2, 64}, DType::float32);
  const Tensor fresh = uniform({1, 8, 2, 64}, DType::float32, 18);
  for (const Target& target : {Target(), kReference}) {
    KVCacheAppendFwdOp append(target);
    CHECK_THROWS_WITH_AS(append(k, v, fresh, fresh, int32s({60}, {1})),
                         doctest::Contains("KVCacheAppendFwdOp: cache_seqlens[0] = 60 is outside [0, 56]: a sequence holds "
                                           "from 0 to Smax = 64 positions after its 8 new tokens"),
                         ValueError);
    for (double x : k.to_doubles()) REQUIRE(x == 0.0);
    PagedKVCacheAppendFwdOp paged(target);
    const Tensor pages = Tensor::zeros({4, 16, 2, 64}, DType::float32), values = Tensor::zeros({4, 16, 2, 64}, DType::float32);
    CHECK_THROWS_WITH_AS(paged(pages, values, fresh, fresh, int32s({0, 7}, {1, 2}), int32s({12}, {1})),
                         doctest::Contains("block_table[0, 1] = 7 names no page: expected 0 to 3 (NB = 4) for the page "
                                           "holding positions 16 to 19 of sequence 0"),
                         ValueError);
    for (double x : pages.to_doubles()) REQUIRE(x == 0.0);
  }
  CHECK_THROWS_WITH_AS(KVCacheAppendFwdOp()(k, v, uniform({1, 65, 2, 64}, DType::float32, 1),
                                            uniform({1, 65, 2, 64}, DType::float32, 1), int32s({0}, {1})),
                       doctest::Contains("the S new tokens must fit in a cache of Smax positions"), ValueError);
}
