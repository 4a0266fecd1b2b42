// GemmFwdOp on the GPU against the reference kernels on the host: cuda_cublaslt_gemm, which
// dispatch picks for every shape, transposition and dtype; the shared kernels of the hip
// plugin's GEMM, which cuBLASLt is preferred over, built and called directly: the decode
// kernel cuda_dot_rows_gemm for a few rows against [n, k] weights, the tiled kernel
// cuda_tiled_gemm for every shape (its FMA path: the matrix-core path needs an AMD GPU), and
// their refusals; empty and misaligned operands, exact float32 by default, one entry called from several threads on their own streams, and `tileops run
// --check` on cuda:0 (the reference on host copies).
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "support/gpu.hpp"
#include "support/run_command.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/stream.hpp"
#include "tileops/testing.hpp"

using namespace tileops;
using testing::cuda_or_skip;

namespace {

const Device kGpu = Device::parse("cuda:0");
constexpr DType kFloats[] = {DType::float32, DType::float16, DType::bfloat16};

Tensor random(std::vector<std::int64_t> shape, DType dtype, unsigned seed) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu(),
                                 seed)
      .front();
}

// The same values one element past a 256-byte boundary on the GPU: contiguous, misaligned.
Tensor misaligned_on_gpu(const Tensor& host) {
  Tensor flat = Tensor::empty({host.numel() + 1}, host.dtype(), kGpu);
  Tensor v = flat.as_strided(host.shape(), contiguous_strides(host.shape()), 1);
  v.copy_from(host);
  return v;
}

struct Case {
  std::int64_t m, n, k;
  bool trans_a, trans_b;
  DType dtype;
  std::string str() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (trans_a ? " ta" : "") +
           (trans_b ? " tb" : "") + " " + std::string(dtype_name(dtype));
  }
};

ops::GemmFwdOp::Gemm::Call call_of(const Case& c) {
  ops::GemmFwdOp::Gemm::Call call;
  call.device = kGpu;
  call.m = c.m;
  call.n = c.n;
  call.k = c.k;
  call.trans_a = c.trans_a;
  call.trans_b = c.trans_b;
  call.dtype = c.dtype;
  return call;
}

// The cuda plugin's kernel type `key` of GemmFwdOp.
std::shared_ptr<const KernelType> gemm_kernel_type(const std::string& key) {
  for (const RegisteredKernelType& t : registered_kernel_types("GemmFwdOp")) {
    if (t.key == key) return t.type;
  }
  FAIL("no GemmFwdOp kernel type " << key);
  return nullptr;
}

// Runs the case on the GPU (operands as `place` puts them there) through dispatch, or through
// kernel type `direct` built for the case and called without dispatch, and on the host with
// the reference kernels; returns the key that served on the GPU.
std::string check_case(const Case& c, Tensor (*place)(const Tensor&) = nullptr, const char* direct = nullptr) {
  CAPTURE(c.str());
  const Tensor a = random(c.trans_a ? std::vector<std::int64_t>{c.k, c.m} : std::vector<std::int64_t>{c.m, c.k}, c.dtype, 1);
  const Tensor b = random(c.trans_b ? std::vector<std::int64_t>{c.n, c.k} : std::vector<std::int64_t>{c.k, c.n}, c.dtype, 2);
  GemmFwdOp fast(c.trans_a, c.trans_b);
  GemmFwdOp reference(c.trans_a, c.trans_b, std::string(REFERENCE));
  const Tensor want = reference(a, b);
  if (direct != nullptr) {
    const auto type = gemm_kernel_type(direct);
    REQUIRE_FALSE(type->refusal(call_of(c)).has_value());
    const std::shared_ptr<Kernel> kernel = type->entry_for(call_of(c)).factory();
    const Tensor got = Tensor::empty({c.m, c.n}, c.dtype, kGpu);
    static_cast<ops::GemmFwdOp::Gemm*>(type->as_interface(*kernel))
        ->forward(place ? place(a) : a.to(kGpu), place ? place(b) : b.to(kGpu), got);
    const testing::Comparison cmp = testing::compare(got, want);
    CHECK_MESSAGE(cmp.ok, c.str() << ": max abs " << cmp.max_abs << ", max rel " << cmp.max_rel);
    return direct;
  }
  const Tensor got = place ? fast(place(a), place(b)) : fast(a.to(kGpu), b.to(kGpu));
  CHECK(got.device() == kGpu);
  const testing::Comparison cmp = testing::compare(got, want);
  CHECK_MESSAGE(cmp.ok, c.str() << ": max abs " << cmp.max_abs << ", max rel " << cmp.max_rel);
  const auto built = fast.built_entries("gemm");
  return built.empty() ? std::string("(none)") : built.front().key;
}

}  // namespace

TEST_CASE("GPU: cuBLASLt GEMM matches the reference for every transposition and dtype") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] : {std::array<std::int64_t, 3>{9, 64, 96}, {48, 40, 72}, {130, 257, 300}, {3, 5, 7},
                               {256, 512, 1024}}) {
          CHECK(check_case({m, n, k, ta, tb, dt}) == "cuda_cublaslt_gemm");
        }
      }
    }
  }
}

TEST_CASE("GPU: the shared dot-rows GEMM, called directly, serves 1 to 8 rows against [n, k] weights, vector and scalar paths") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t m : {1, 2, 3, 4, 5, 8}) {
      // k a multiple of every vector width, then one that no width divides; n small (one row
      // of b per warp) and large (several per warp); 16-bit rows of more than 1024 packs (8200)
      // take the block kernel's wider blocks.
      for (auto [n, k] : {std::array<std::int64_t, 2>{33, 512}, {3000, 256}, {17, 77}, {1030, 4099}, {70, 8200}}) {
        check_case({m, n, k, false, true, dt}, nullptr, "cuda_dot_rows_gemm");
      }
    }
  }
}

TEST_CASE("GPU: the shared tiled GEMM, called directly, serves every dtype, transposition and tail, at both tile sizes") {
  if (cuda_or_skip() == nullptr) return;
  // Tails in every extent; single rows, columns and k; the last shape has enough 128 x 128
  // tiles to fill the H200's 132 multiprocessors, so it takes the large tile, the others the small.
  const std::array<std::int64_t, 3> shapes[] = {{1, 1, 1},      {7, 13, 5},     {1, 300, 70},   {300, 1, 70},
                                                {64, 64, 1},    {129, 65, 33},  {200, 257, 300}, {1537, 1543, 70}};
  for (DType dt : kFloats) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] : shapes) check_case({m, n, k, ta, tb, dt}, nullptr, "cuda_tiled_gemm");
        check_case({40, 72, 136, ta, tb, dt}, misaligned_on_gpu, "cuda_tiled_gemm");
      }
    }
  }
}

TEST_CASE("GPU: the tiled GEMM refuses other dtypes and operands whose offsets would overflow its index math") {
  if (cuda_or_skip() == nullptr) return;
  const auto tiled = gemm_kernel_type("cuda_tiled_gemm");
  CHECK_FALSE(tiled->refusal(call_of({2048, 14336, 4096, true, false, DType::bfloat16})).has_value());
  const auto huge = tiled->refusal(call_of({std::int64_t{1} << 31, std::int64_t{1} << 31, 8, false, true, DType::float16}));
  REQUIRE(huge.has_value());
  CHECK(huge->find("overflows the kernel's 64-bit offsets") != std::string::npos);
  CHECK(tiled->refusal(call_of({8, 8, 8, false, true, DType::int32})) ==
        std::optional<std::string>("serves float32, float16 and bfloat16, not int32"));
}

TEST_CASE("GPU: dispatch picks cuBLASLt for every GEMM, decode included, the dot-rows kernel names what it refuses") {
  if (cuda_or_skip() == nullptr) return;
  GemmFwdOp op(false, true);
  // The Llama-3.1-8B shapes, decode and prefill: cuBLASLt is preferred over the dot rows.
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{1, 28672, 4096}, {4, 28672, 4096}, {8, 4096, 14336},
                         {2048, 4096, 4096}, {8192, 8192, 8192}}) {
    CHECK(op.key_for("gemm", call_of({m, n, k, false, true, DType::bfloat16})) == "cuda_cublaslt_gemm");
  }
  const auto dot_rows = gemm_kernel_type("cuda_dot_rows_gemm");
  CHECK_FALSE(dot_rows->refusal(call_of({8, 64, 64, false, true, DType::bfloat16})).has_value());
  CHECK(dot_rows->refusal(call_of({9, 64, 64, false, true, DType::bfloat16})) ==
        std::optional<std::string>("serves at most 8 rows of a, not m = 9"));
  CHECK(dot_rows->refusal(call_of({8, 64, 64, true, true, DType::bfloat16})) ==
        std::optional<std::string>("serves a stored [m, k] (trans_a = false) only"));
  CHECK(dot_rows->refusal(call_of({8, 64, 64, false, false, DType::bfloat16})) ==
        std::optional<std::string>("serves b stored [n, k] (trans_b = true) only"));
}

TEST_CASE("GPU: GEMM with an empty extent: k = 0 gives zeros, m = 0 or n = 0 an empty result") {
  if (cuda_or_skip() == nullptr) return;
  for (bool tb : {false, true}) {
    for (std::int64_t m : {std::int64_t{4}, std::int64_t{20}}) {
      CAPTURE(m);
      GemmFwdOp op(false, tb);
      const Tensor a = Tensor::empty({m, 0}, DType::bfloat16, kGpu);
      const Tensor b = Tensor::empty(tb ? Shape{6, 0} : Shape{0, 6}, DType::bfloat16, kGpu);
      const Tensor d = op(a, b);
      CHECK(d.shape() == Shape{m, 6});
      CHECK(d.to_doubles() == std::vector<double>(static_cast<std::size_t>(m) * 6, 0.0));
      CHECK(op(Tensor::empty({0, 8}, DType::bfloat16, kGpu), Tensor::empty(tb ? Shape{6, 8} : Shape{8, 6}, DType::bfloat16, kGpu))
                .shape() == Shape{0, 6});
    }
  }
}

TEST_CASE("GPU: GEMM operands that start one element past an aligned address") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (bool ta : {false, true}) {
      CHECK(check_case({40, 72, 136, ta, false, dt}, misaligned_on_gpu) == "cuda_cublaslt_gemm");
    }
    CHECK(check_case({4, 72, 136, false, true, dt}, misaligned_on_gpu) == "cuda_cublaslt_gemm");
    check_case({4, 72, 136, false, true, dt}, misaligned_on_gpu, "cuda_dot_rows_gemm");
  }
}

TEST_CASE("GPU: float32 GEMM is exact float32 (no TF32) unless TILEOPS_CUDA_ALLOW_TF32 opts in") {
  if (cuda_or_skip() == nullptr) return;
  // Products of k = 4096 random terms: TF32's 10-bit mantissa misses float32's tolerance.
  const Case c{64, 96, 4096, false, false, DType::float32};
  CHECK(check_case(c) == "cuda_cublaslt_gemm");
  GemmFwdOp op(false, false);
  op(random({64, 4096}, DType::float32, 1).to(kGpu), random({4096, 96}, DType::float32, 2).to(kGpu));
  const auto config = op.built_entries("gemm").front().kernel->config();
  REQUIRE(config.has_value());
  CHECK(config->find("compute=32F ") != std::string::npos);

  const std::string cli = test::tileops_cli_path() + " run GemmFwdOp -p trans_b=false -i a=[64,256]:float32 "
                                                          "-i b=[256,96]:float32 --device cuda:0 --json -r 1";
  const auto tf32 = test::run_command("TILEOPS_CUDA_ALLOW_TF32=1 " + cli);
  REQUIRE(tf32.status == 0);
  CHECK(nlohmann::json::parse(tf32.out).at("kernels")[0].at("config").get<std::string>().find("compute=32F_FAST_TF32") !=
        std::string::npos);
  const auto bad = test::run_command("TILEOPS_CUDA_ALLOW_TF32=maybe " + cli + " 2>&1");
  CHECK(bad.status == 1);
  CHECK(bad.out.find("TILEOPS_CUDA_ALLOW_TF32: expected 1, true, on, 0, false or off, got 'maybe'") != std::string::npos);
}

TEST_CASE("GPU: one GEMM entry serves threads calling it on their own streams at once") {
  if (cuda_or_skip() == nullptr) return;
  for (std::int64_t m : {std::int64_t{4}, std::int64_t{512}}) {
    CAPTURE(m);
    GemmFwdOp op(false, true);
    GemmFwdOp reference(false, true, std::string(REFERENCE));
    const Tensor a = random({m, 1024}, DType::bfloat16, 3), b = random({768, 1024}, DType::bfloat16, 4);
    const Tensor a_gpu = a.to(kGpu), b_gpu = b.to(kGpu);
    const Tensor first_out = op(a_gpu, b_gpu);  // builds the entry
    CHECK(testing::compare(first_out, reference(a, b)).ok);
    const std::vector<double> first = first_out.to_doubles();
    constexpr int kThreads = 4;
    std::vector<int> same(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        cudaStream_t s{};
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
        {
          StreamGuard on(kGpu, s);
          bool all = true;
          for (int i = 0; i < 20; ++i) all = all && op(a_gpu, b_gpu).to_doubles() == first;
          same[t] = all ? 1 : 0;
        }
        cudaStreamDestroy(s);
      });
    }
    for (auto& th : threads) th.join();
    CHECK(same == std::vector<int>(kThreads, 1));
    CHECK(op.built_entries("gemm").size() == 1);
  }
}

TEST_CASE("GPU: tileops run --check compares GEMM and the SwiGLU MLP on cuda:0 with the reference on the host") {
  if (cuda_or_skip() == nullptr) return;
  const std::string cli = test::tileops_cli_path();
  for (const std::string args : {"GemmFwdOp --workload llama-8b-qkv-decode", "SwiGLUMLPFwdOp --workload llama-8b-decode"}) {
    CAPTURE(args);
    const auto r = test::run_command(cli + " run " + args + " --device cuda:0 --check --json -r 2");
    CAPTURE(r.out);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("check").at("ok") == true);
    CHECK(j.at("device") == "cuda:0");
    for (const auto& k : j.at("kernels")) CHECK(k.at("key").get<std::string>().rfind("cuda_", 0) == 0);
  }
}
