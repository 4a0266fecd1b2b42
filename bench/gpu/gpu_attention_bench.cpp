// Times the cuda plugin's attention kernels through the ops on one GPU and prints one JSON object
// per line: this run's copy bandwidth, then each case (prefill at the manifest's workload shapes,
// causal and not; decode and paged decode at batch 1/32/128 and context 4k/32k, every sequence
// full) with its median milliseconds per call, the attention FLOPs (prefill) and the cache bytes
// read (decode). A prefill row names the kernel type that served it; where that is the
// warp-specialised Hopper kernel, a second row times the shape with it disabled (the cp.async
// Hopper kernel). bench/gpu/attention_vs_torch.py runs it beside PyTorch's SDPA and prints the
// table. Method: bench_timing.hpp; decode inputs rotate among enough caches to read more than
// twice the L2 cache per batch; the caches are filled on the device.
// With arguments `decode|paged_decode BATCH CONTEXT` it times only that decode row, with
// `prefill LABEL` only that prefill row in bfloat16 on the kernel type the configuration picks
// (a profiler's target: one kernel shape, no other attention launches before it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "tileops/config.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/attention.hpp"
#include "tileops/testing.hpp"

namespace {

using namespace tileops;
const Device kGpu = Device::parse("cuda:0");

Tensor random_gpu(const Shape& shape, DType dtype, unsigned seed) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, shape}}, Device::cpu(), seed).front().to(kGpu);
}

// A tensor on the GPU whose every byte is 0x3c (bfloat16 0.0115, float16 1.06): filled on the
// device, as caches of many gigabytes would take minutes to fill from the host.
Tensor filled_gpu(const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype, kGpu);
  bench::check(cudaMemset(t.data_ptr(), 0x3c, t.numel() * dtype_size(dtype)), "memset");
  return t;
}

Tensor filled_int32(std::int64_t n, double value) {
  return Tensor::from_doubles(std::vector<double>(static_cast<std::size_t>(n), value), {n}, DType::int32).to(kGpu);
}

struct Prefill {
  const char* label;
  std::int64_t batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal;
};

// The prefill rows: the attention manifest's workload shapes, causal and not.
const std::vector<Prefill> kPrefills = {
    {"llama3-8b-prefill-512", 4, 512, 512, 32, 8, 128, true},
    {"llama3-8b-prefill-2k", 1, 2048, 2048, 32, 8, 128, true},
    {"llama3-8b-full-2k", 1, 2048, 2048, 32, 8, 128, false},
    {"llama3-8b-chunk-512-4k", 1, 512, 4096, 32, 8, 128, true},
    {"llama3-70b-prefill-512", 2, 512, 512, 64, 8, 128, true},
    {"llama3-70b-prefill-2k", 1, 2048, 2048, 64, 8, 128, true},
    {"llama3.2-1b-prefill-2k", 1, 2048, 2048, 32, 8, 64, true},
    {"llama2-7b-prefill-2k", 1, 2048, 2048, 32, 32, 128, true},
    {"llama3-8b-full-8k", 1, 8192, 8192, 32, 8, 128, false},
};

double prefill_flops(const Prefill& p) {
  const double pairs = p.causal ? static_cast<double>(p.q_len) * p.kv_len - 0.5 * p.q_len * (p.q_len - 1.0)
                                : static_cast<double>(p.q_len) * p.kv_len;
  return 4.0 * static_cast<double>(p.head_dim) * p.batch * p.heads * pairs;
}

constexpr const char* kWsKernel = "cuda_gqa_attention_sm90_ws";

// Times the shape on the kernel type the configuration picks, prints its row and returns that
// kernel type's key.
std::string run_prefill(const Prefill& p, DType dtype) {
  const Tensor q = random_gpu({p.batch, p.q_len, p.heads, p.head_dim}, dtype, 1);
  const Tensor k = random_gpu({p.batch, p.kv_len, p.kv_heads, p.head_dim}, dtype, 2);
  const Tensor v = random_gpu({p.batch, p.kv_len, p.kv_heads, p.head_dim}, dtype, 3);
  GroupedQueryAttentionFwdOp op(p.causal);
  const double ms = bench::time_calls([&](int) { op(q, k, v); }, 1);
  const std::string kernel(op.last_call()->kernels.at(0));
  std::printf("{\"kind\": \"prefill\", \"label\": \"%s\", \"kernel\": \"%s\", \"batch\": %lld, \"q_len\": %lld, \"kv_len\": %lld, "
              "\"heads\": %lld, \"kv_heads\": %lld, \"head_dim\": %lld, \"causal\": %s, \"dtype\": \"%s\", "
              "\"ms\": %.5f, \"flops\": %.6g}\n",
              p.label, kernel.c_str(), static_cast<long long>(p.batch), static_cast<long long>(p.q_len),
              static_cast<long long>(p.kv_len), static_cast<long long>(p.heads), static_cast<long long>(p.kv_heads),
              static_cast<long long>(p.head_dim), p.causal ? "true" : "false", std::string(dtype_name(dtype)).c_str(),
              ms, prefill_flops(p));
  std::fflush(stdout);
  return kernel;
}

void run_decode(bool paged, std::int64_t batch, std::int64_t context, DType dtype) {
  constexpr std::int64_t kHeads = 32, kKvHeads = 8, kHeadDim = 128, kBlock = 16;
  const double cache_bytes = 2.0 * batch * context * kKvHeads * kHeadDim * static_cast<double>(dtype_size(dtype));
  const int copies = static_cast<int>(std::clamp(200e6 / cache_bytes, 1.0, 8.0));
  std::vector<Tensor> ks, vs, qs;
  for (int c = 0; c < copies; ++c) {
    const Shape shape = paged ? Shape{batch * context / kBlock, kBlock, kKvHeads, kHeadDim}
                              : Shape{batch, context, kKvHeads, kHeadDim};
    ks.push_back(filled_gpu(shape, dtype));
    vs.push_back(filled_gpu(shape, dtype));
    qs.push_back(random_gpu({batch, kHeads, kHeadDim}, dtype, 30 + c));
  }
  const Tensor lens = filled_int32(batch, static_cast<double>(context));
  const std::int64_t max_blocks = context / kBlock;
  std::vector<double> table(static_cast<std::size_t>(batch * max_blocks));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<double>(i);
  const Tensor block_table = Tensor::from_doubles(table, {batch, max_blocks}, DType::int32).to(kGpu);
  GroupedQueryAttentionDecodeFwdOp decode;
  GroupedQueryAttentionPagedDecodeFwdOp paged_decode;
  const double ms = bench::time_calls(
      [&](int c) {
        if (paged) paged_decode(qs[c], ks[c], vs[c], block_table, lens);
        else decode(qs[c], ks[c], vs[c], lens);
      },
      copies);
  std::printf("{\"kind\": \"%s\", \"batch\": %lld, \"context\": %lld, \"heads\": %lld, \"kv_heads\": %lld, "
              "\"head_dim\": %lld, \"block_size\": %lld, \"dtype\": \"%s\", \"ms\": %.5f, \"bytes\": %.6g}\n",
              paged ? "paged_decode" : "decode", static_cast<long long>(batch), static_cast<long long>(context),
              static_cast<long long>(kHeads), static_cast<long long>(kKvHeads), static_cast<long long>(kHeadDim),
              static_cast<long long>(paged ? kBlock : 0), std::string(dtype_name(dtype)).c_str(), ms, cache_bytes);
  std::fflush(stdout);
}

// A whole number in [1, most] from text, or -1.
long long count_arg(const char* text, long long most) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && v >= 1 && v <= most ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  load_backends();
  if (argc == 4) {
    const std::string kind = argv[1];
    const long long batch = count_arg(argv[2], 1024), context = count_arg(argv[3], 1 << 20);
    if ((kind != "decode" && kind != "paged_decode") || batch < 1 || context < 1 || context % 16 != 0) {
      std::fprintf(stderr,
                   "gpu_attention_bench: expected decode or paged_decode, a batch in [1, 1024] and a context in "
                   "[16, 2^20] that 16 divides; got '%s' '%s' '%s'\n",
                   argv[1], argv[2], argv[3]);
      return 2;
    }
    run_decode(kind == "paged_decode", batch, context, DType::bfloat16);
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "prefill") {
    const auto row = std::find_if(kPrefills.begin(), kPrefills.end(),
                                  [&](const Prefill& p) { return p.label == std::string(argv[2]); });
    if (row == kPrefills.end()) {
      std::fprintf(stderr, "gpu_attention_bench: no prefill row '%s'; the rows:", argv[2]);
      for (const Prefill& p : kPrefills) std::fprintf(stderr, " %s", p.label);
      std::fprintf(stderr, "\n");
      return 2;
    }
    run_prefill(*row, DType::bfloat16);
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: gpu_attention_bench [decode|paged_decode BATCH CONTEXT | prefill LABEL]\n");
    return 2;
  }
  std::printf("{\"copy_gbps\": %.1f}\n", bench::copy_bandwidth_gbps());
  for (const Prefill& p : kPrefills) {
    for (DType dtype : {DType::bfloat16, DType::float16}) {
      if (run_prefill(p, dtype) != kWsKernel) continue;
      const Config saved = config();
      Config without_ws = saved;
      without_ws.disable_kernels.push_back(kWsKernel);
      set_config(without_ws);
      run_prefill(p, dtype);
      set_config(saved);
    }
  }
  for (bool paged : {false, true}) {
    for (std::int64_t batch : {1, 32, 128}) {
      for (std::int64_t context : {4096, 32768}) run_decode(paged, batch, context, DType::bfloat16);
    }
  }
  return 0;
}
