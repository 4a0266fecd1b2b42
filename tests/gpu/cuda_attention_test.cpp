// The cuda plugin's attention kernels and KV cache appends against the reference kernels on the
// host (the workload rows run in cuda_kernels_test.cpp): the prefill kernels (on Hopper the
// warp-specialised wgmma one, the cp.async wgmma one with the first disabled and the sm_80
// tensor-core one with both disabled; elsewhere the sm_80 one; and the portable one) over masks, GQA ratios, head dims and odd lengths; decode and paged decode with
// and without splitting the keys; appends; and the lengths and block-table entries that the
// kernels read from device memory and find out of range, which are reported as ValueError at
// the next synchronisation and never read through.
#include <doctest/doctest.h>

#include <algorithm>

#include "support/gpu.hpp"
#include "support/attention_cases.hpp"
#include "support/scoped_config.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/attention.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using testing::cuda_or_skip;
using testing::int32s;
using testing::uniform;

namespace {

const Device kGpu = Device::parse("cuda:0");
const Target kReference = std::string(REFERENCE);

// A float32 tensor of ones on the host.
Tensor ones(const Shape& shape) {
  return Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(shape_numel(shape)), 1.0), shape,
                              DType::float32);
}

void check_same(const Tensor& got, const Tensor& want, const std::string& what) {
  REQUIRE(got.device() == kGpu);
  const testing::Comparison c = testing::compare(got.to(Device::cpu()), want);
  CHECK_MESSAGE(c.ok, what << ": max abs " << c.max_abs << ", max rel " << c.max_rel);
}

using Prefill = testing::PrefillCase;

void check_prefill(const Prefill& p) { testing::check_prefill(p, kGpu); }

}  // namespace

TEST_CASE("GPU attention matches the reference: causal and not, fewer queries than keys, windows, soft cap, lse") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dtype : {DType::bfloat16, DType::float16, DType::float32}) {
    for (bool causal : {true, false}) {
      Prefill p{2, 200, 200, 8, 2, 128, causal};
      p.dtype = dtype;
      check_prefill(p);
      p.q_len = 77;  // a chunk after 123 cached tokens
      check_prefill(p);
      p.window = 50;
      check_prefill(p);
      p.softcap = 20.0;
      check_prefill(p);
      p.q_len = 300;  // more queries than keys: the first rows see nothing when causal
      check_prefill(p);
    }
  }
}

TEST_CASE("GPU attention matches the reference at GQA ratios 1, 4 and 8, head dims 64 and 128 (tensor cores) and 32, 96 and 256 (portable), lengths 1, 17 and 1000") {
  if (cuda_or_skip() == nullptr) return;
  for (auto [heads, kv_heads] : {std::pair<std::int64_t, std::int64_t>{8, 8}, {8, 2}, {8, 1}}) {
    for (std::int64_t d : {32, 64, 96, 128, 256}) {
      for (std::int64_t len : {1, 17}) check_prefill({2, len, len, heads, kv_heads, d});
    }
  }
  check_prefill({1, 1000, 1000, 4, 1, 128, true, -1, std::nullopt, DType::float16});
  check_prefill({1, 1000, 1000, 4, 2, 64, false, 300, 30.0, DType::bfloat16});
  check_prefill({1, 1, 1000, 8, 1, 128, true, 100, std::nullopt, DType::float32});
}

TEST_CASE("GPU attention: on compute capability 9.0 the warp-specialised Hopper kernel type serves 16-bit prefill and float32 goes to the shared one, with it disabled the cp.async Hopper kernel, and with both disabled the sm_80 tensor-core kernel, matches the reference") {
  DeviceRuntime* rt = cuda_or_skip();
  if (rt == nullptr) return;
  const bool hopper = rt->facts(0).arch == 90;
  const auto served_by = [](DType dtype) {
    GroupedQueryAttentionFwdOp op(true);
    const Tensor q = uniform({1, 40, 4, 64}, dtype, 1).to(kGpu);
    const Tensor kv = uniform({1, 40, 2, 64}, dtype, 2).to(kGpu);
    op(q, kv, kv);
    REQUIRE(op.last_call()->kernels.size() == 1);
    return op.last_call()->kernels[0];
  };
  CHECK(served_by(DType::bfloat16) == (hopper ? "cuda_gqa_attention_sm90_ws" : "cuda_gqa_attention"));
  CHECK(served_by(DType::float32) == "cuda_gqa_attention");

  const auto check_16bit = [] {
    for (DType dtype : {DType::bfloat16, DType::float16}) {
      for (bool causal : {true, false}) {
        check_prefill({2, 200, 200, 8, 2, 128, causal, -1, std::nullopt, dtype});
        check_prefill({2, 77, 200, 8, 2, 64, causal, 50, 20.0, dtype});
        check_prefill({1, 1000, 1000, 4, 1, 128, causal, -1, std::nullopt, dtype});
      }
    }
  };
  for (const std::vector<std::string>& disabled :
       {std::vector<std::string>{"cuda_gqa_attention_sm90_ws"},
        std::vector<std::string>{"cuda_gqa_attention_sm90_ws", "cuda_gqa_attention_sm90"}}) {
    Config without = config();
    without.disable_kernels = disabled;
    test::ScopedConfig scoped(without);
    CHECK(served_by(DType::float16) ==
          (hopper && disabled.size() == 1 ? "cuda_gqa_attention_sm90" : "cuda_gqa_attention"));
    check_16bit();
  }
}

TEST_CASE("GPU attention: the warp-specialised Hopper kernel over its pipeline's edges: one key tile and many, lengths not a multiple of 128 in a batch of several (rows past a sequence read as zeros), query tiles that see no key, windows that start the keys mid-sequence, Llama heads, more work tiles than multiprocessors (each persistent block takes several in turn)") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dtype : {DType::bfloat16, DType::float16}) {
    for (bool causal : {true, false}) {
      for (std::int64_t d : {64, 128}) {
        check_prefill({3, 300, 300, 8, 2, d, causal, -1, std::nullopt, dtype});
        check_prefill({2, 128, 128, 4, 4, d, causal, -1, std::nullopt, dtype});
        check_prefill({2, 129, 385, 4, 1, d, causal, -1, std::nullopt, dtype});
        check_prefill({1, 1100, 1100, 4, 2, d, causal, 260, std::nullopt, dtype});
        check_prefill({2, 200, 1100, 8, 2, d, causal, -1, 30.0, dtype});
        check_prefill({6, 300, 300, 16, 4, d, causal, -1, std::nullopt, dtype});
      }
      check_prefill({1, 400, 200, 4, 2, 128, causal, -1, std::nullopt, dtype});
      check_prefill({1, 512, 512, 32, 8, 128, causal, -1, std::nullopt, dtype});
    }
  }
}

TEST_CASE("GPU attention of an empty batch, no keys or no queries returns empty or zero outputs without a launch") {
  if (cuda_or_skip() == nullptr) return;
  check_prefill({0, 5, 5, 4, 2, 64});
  check_prefill({1, 0, 5, 4, 2, 64});
  check_prefill({1, 5, 0, 4, 2, 64, false});
}

TEST_CASE("GPU decode over a contiguous and a paged cache (pages of 16 and 32) matches the reference: ragged and zero lengths, windows, soft cap, split and unsplit keys, tensor cores and CUDA cores") {
  if (cuda_or_skip() == nullptr) return;
  // The last cache, one sequence of 8999 keys, splits into up to 70 parts: more than a merge
  // thread reads before the parts' weights are known.
  for (auto [smax, lens] : {std::pair<std::int64_t, std::vector<int>>{48, {0, 1, 17, 48, 33}},
                            {3000, {2999, 0, 1500}}, {9000, {8999}}}) {
    for (DType dtype : {DType::bfloat16, DType::float32}) {
      // Groups of 4, 8, 1 and 32 query heads (the tensor-core kernel serves 16 a block); head
      // dims 64 and 128 (tensor cores for 16-bit types) and 96 (CUDA cores).
      for (auto [heads, kv_heads, d] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{32, 8, 128},
                                        {8, 1, 64}, {6, 6, 96}, {16, 2, 128}, {32, 1, 128}}) {
        for (std::int64_t block_size : {16, 32}) {
          const testing::KvCaches c = testing::make_kv_caches(lens, smax, kv_heads, d, block_size, dtype);
          const auto batch = static_cast<std::int64_t>(lens.size());
          const Tensor q = uniform({batch, heads, d}, dtype, 13);
          for (auto [window, softcap] : {std::pair<std::int64_t, std::optional<double>>{-1, std::nullopt},
                                         {9, std::nullopt}, {-1, 20.0}}) {
            INFO("smax ", smax, " ", dtype_name(dtype), " heads ", heads, "/", kv_heads, " d ", d, " block size ",
                 block_size, " window ", window);
            const Tensor want =
                GroupedQueryAttentionDecodeFwdOp(std::nullopt, window, softcap, kReference)(q, c.k, c.v, c.lens);
            GroupedQueryAttentionDecodeFwdOp decode(std::nullopt, window, softcap);
            GroupedQueryAttentionPagedDecodeFwdOp paged(std::nullopt, window, softcap);
            check_same(decode(q.to(kGpu), c.k.to(kGpu), c.v.to(kGpu), c.lens.to(kGpu)), want, "contiguous");
            check_same(paged(q.to(kGpu), c.k_pages.to(kGpu), c.v_pages.to(kGpu), c.table.to(kGpu), c.lens.to(kGpu)),
                       want, "paged");
          }
        }
      }
    }
  }
}

TEST_CASE("GPU appends write the new tokens after the cached ones, and where two tokens share a paged slot, the later in (b, t) order is kept") {
  if (cuda_or_skip() == nullptr) return;
  const Tensor k = uniform({2, 40, 2, 64}, DType::bfloat16, 1), v = uniform({2, 40, 2, 64}, DType::bfloat16, 2);
  const Tensor k_new = uniform({2, 5, 2, 64}, DType::bfloat16, 3), v_new = uniform({2, 5, 2, 64}, DType::bfloat16, 4);
  const Tensor lens = int32s({7, 35}, {2});
  Tensor k_gpu = k.to(kGpu), v_gpu = v.to(kGpu);
  KVCacheAppendFwdOp()(k_gpu, v_gpu, k_new.to(kGpu), v_new.to(kGpu), lens.to(kGpu));
  Tensor k_ref = k.clone(), v_ref = v.clone();
  KVCacheAppendFwdOp{kReference}(k_ref, v_ref, k_new, v_new, lens);
  check_same(k_gpu, k_ref, "k cache");
  check_same(v_gpu, v_ref, "v cache");

  // Both sequences' tables name page 1 for their second page: sequence 1's tokens land on the
  // slots sequence 0's tokens 1 .. 4 also land on (positions 16 .. 19 of both).
  const Tensor pages = uniform({4, 16, 2, 64}, DType::float32, 5), values = uniform({4, 16, 2, 64}, DType::float32, 6);
  const Tensor table = int32s({0, 1, 2, 1}, {2, 2});
  const Tensor new_k = uniform({2, 5, 2, 64}, DType::float32, 7), new_v = uniform({2, 5, 2, 64}, DType::float32, 8);
  const Tensor starts = int32s({15, 16}, {2});
  Tensor pages_gpu = pages.to(kGpu), values_gpu = values.to(kGpu);
  PagedKVCacheAppendFwdOp()(pages_gpu, values_gpu, new_k.to(kGpu), new_v.to(kGpu), table.to(kGpu), starts.to(kGpu));
  Tensor pages_ref = pages.clone(), values_ref = values.clone();
  PagedKVCacheAppendFwdOp{kReference}(pages_ref, values_ref, new_k, new_v, table, starts);
  check_same(pages_gpu, pages_ref, "k pages");
  check_same(values_gpu, values_ref, "v pages");
}

TEST_CASE("GPU decode and appends report lengths and block-table entries out of range as ValueError at the next synchronisation, reading and writing nothing through them") {
  DeviceRuntime* gpu = cuda_or_skip();
  if (gpu == nullptr) return;
  const Tensor q = ones({2, 4, 64}).to(kGpu);
  const Tensor k = ones({2, 64, 2, 64}).to(kGpu);
  const Tensor v = ones({2, 64, 2, 64}).to(kGpu);
  GroupedQueryAttentionDecodeFwdOp decode;
  const Tensor o = decode(q, k, v, int32s({3, 5000}, {2}).to(kGpu));
  CHECK_THROWS_WITH_AS(gpu->synchronize(0),
                       doctest::Contains("cuda:0: an earlier call's kernel cuda_gqa_decode read cache_seqlens[1] = "
                                         "5000, outside [0, 64]"),
                       ValueError);
  // The sequence counted as empty; the other one is served.
  const std::vector<double> out = o.to(Device::cpu()).to_doubles();
  CHECK(out[0] == 1.0);
  CHECK(out[4 * 64] == 0.0);
  CHECK_NOTHROW(gpu->synchronize(0));  // the report was cleared

  GroupedQueryAttentionPagedDecodeFwdOp paged;
  const Tensor pages = ones({12, 16, 2, 64}).to(kGpu);
  paged(q, pages, pages, int32s({0, 99, 2, 3, 4, 5}, {2, 3}).to(kGpu), int32s({20, 40}, {2}).to(kGpu));
  // The next call on the device reports it before it launches anything.
  CHECK_THROWS_WITH_AS(
      paged(q, pages, pages, int32s({0, 1, 2, 3, 4, 5}, {2, 3}).to(kGpu), int32s({20, 40}, {2}).to(kGpu)),
      doctest::Contains("kernel cuda_gqa_paged_decode read block_table[0, 1] = 99, outside [0, 11]"), ValueError);

  Tensor k_cache = Tensor::zeros({2, 8, 2, 64}, DType::float32).to(kGpu);
  Tensor v_cache = Tensor::zeros({2, 8, 2, 64}, DType::float32).to(kGpu);
  const Tensor new_ones = ones({2, 2, 2, 64}).to(kGpu);
  KVCacheAppendFwdOp()(k_cache, v_cache, new_ones, new_ones, int32s({7, 0}, {2}).to(kGpu));
  CHECK_THROWS_WITH_AS(gpu->synchronize(0),
                       doctest::Contains("kernel cuda_kv_cache_append read cache_seqlens[0] = 7, outside [0, 6]"),
                       ValueError);
  const std::vector<double> cache = k_cache.to(Device::cpu()).to_doubles();
  const auto written = std::count(cache.begin(), cache.end(), 1.0);
  CHECK(written == 2 * 2 * 64);  // sequence 1's two tokens only
}
