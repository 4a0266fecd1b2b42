// GemmFwdOp on the GPU against the reference kernels on the host: cuda_cublaslt_gemm for every
// transposition and dtype, the decode kernels for a few rows against [n, k] weights
// (cuda_mma_dot_rows_gemm on tensor cores for 16-bit dtypes and k a multiple of 8,
// cuda_dot_rows_gemm otherwise) and the refusals that leave the rest to cuBLASLt, empty and misaligned operands, exact float32 by
// default, one entry called from several threads on their own streams, and `tileops run
// --check` on cuda:0 (the reference on host copies).
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "support/gpu.hpp"
#include "support/run_command.hpp"
#include "tileops/errors.hpp"
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

// The decode kernel that serves m <= 8 rows of a against b stored [n, k] on an H100/H200.
const char* decode_key(DType dtype, std::int64_t k) {
  return dtype != DType::float32 && k % 8 == 0 ? "cuda_mma_dot_rows_gemm" : "cuda_dot_rows_gemm";
}

// Runs the case on the GPU (operands as `place` puts them there) and on the host with the
// reference kernels; returns the key that served on the GPU.
std::string check_case(const Case& c, Tensor (*place)(const Tensor&) = nullptr) {
  CAPTURE(c.str());
  const Tensor a = random(c.trans_a ? std::vector<std::int64_t>{c.k, c.m} : std::vector<std::int64_t>{c.m, c.k}, c.dtype, 1);
  const Tensor b = random(c.trans_b ? std::vector<std::int64_t>{c.n, c.k} : std::vector<std::int64_t>{c.k, c.n}, c.dtype, 2);
  GemmFwdOp fast(c.trans_a, c.trans_b);
  GemmFwdOp reference(c.trans_a, c.trans_b, std::string(REFERENCE));
  const Tensor got = place ? fast(place(a), place(b)) : fast(a.to(kGpu), b.to(kGpu));
  const Tensor want = reference(a, b);
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
          const Case c{m, n, k, ta, tb, dt};
          const bool decode = m <= 8 && !ta && tb;
          CHECK(check_case(c) == (decode ? decode_key(dt, k) : "cuda_cublaslt_gemm"));
        }
      }
    }
  }
}

TEST_CASE("GPU: the decode GEMMs serve 1 to 8 rows against [n, k] weights, tensor-core, vector and scalar paths") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    for (std::int64_t m : {1, 2, 3, 4, 5, 6, 7, 8}) {
      // k a multiple of every vector width, one that is a multiple of 8 but not of a lane
      // group's 32, then ones that no width divides; n below, at and past a tile of 16 rows,
      // small (one row of b per warp) and large (several per warp).
      for (auto [n, k] : {std::array<std::int64_t, 2>{33, 512}, {3000, 256}, {16, 200}, {40, 8}, {17, 77}, {1030, 4099}}) {
        CHECK(check_case({m, n, k, false, true, dt}) == decode_key(dt, k));
      }
    }
  }
}

TEST_CASE("GPU: the decode GEMMs refuse what they do not serve, and cuBLASLt serves it") {
  if (cuda_or_skip() == nullptr) return;
  GemmFwdOp op(false, true);
  GemmCall call;
  call.device = kGpu;
  call.m = 9;
  call.n = 64;
  call.k = 64;
  call.trans_b = true;
  call.dtype = DType::bfloat16;
  CHECK(op.key_for("gemm", call) == "cuda_cublaslt_gemm");
  call.m = 8;
  CHECK(op.key_for("gemm", call) == "cuda_mma_dot_rows_gemm");
  call.k = 60;
  CHECK(op.key_for("gemm", call) == "cuda_dot_rows_gemm");
  call.k = 64;
  call.dtype = DType::float32;
  CHECK(op.key_for("gemm", call) == "cuda_dot_rows_gemm");
  call.dtype = DType::bfloat16;
  call.arch = 75;  // before tensor-core bfloat16
  CHECK(op.key_for("gemm", call) == "cuda_dot_rows_gemm");
  call.arch.reset();
  call.trans_b = false;
  CHECK(op.key_for("gemm", call) == "cuda_cublaslt_gemm");
  call.trans_b = true;
  call.trans_a = true;
  CHECK(op.key_for("gemm", call) == "cuda_cublaslt_gemm");
  // The Llama-3.1-8B shapes: decode goes to the tensor-core dot rows, prefill to cuBLASLt.
  call.trans_a = false;
  for (auto [m, n, k, key] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, const char*>{1, 28672, 4096, "cuda_mma_dot_rows_gemm"},
                              {4, 28672, 4096, "cuda_mma_dot_rows_gemm"},
                              {4, 4096, 14336, "cuda_mma_dot_rows_gemm"},
                              {2048, 4096, 4096, "cuda_cublaslt_gemm"},
                              {8192, 8192, 8192, "cuda_cublaslt_gemm"}}) {
    call.m = m;
    call.n = n;
    call.k = k;
    CHECK(op.key_for("gemm", call) == key);
  }
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
    // The tensor-core kernel hands misaligned operands to the shared one.
    CHECK(check_case({4, 72, 136, false, true, dt}, misaligned_on_gpu) == decode_key(dt, 136));
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
