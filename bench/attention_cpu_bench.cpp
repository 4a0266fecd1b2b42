// CPU attention: GroupedQueryAttentionFwdOp (the cpu plugin's tiled online-softmax kernel) against
// attention composed of libtorch operators (matmul, scale, causal mask, softmax, matmul), in one
// process with the same thread count, at Llama-3.1-8B's heads (32 query, 8 key/value, head dim
// 128): the prefill, and a decode step over long contexts. libtorch gets its most favourable
// layout: for the prefill q, k and v already [B, H, S, D] with the key and value heads already
// repeated for every query head, and the mask built beforehand; for the decode the cache already
// [B, Hkv, L, D]; none of that is timed. The two run interleaved, round after round, and each time is the median over
// the rounds, so that a slow stretch of a shared machine hits both alike. Each row also reports
// the largest difference between the two outputs.
//
// Usage: attention_cpu_bench [rounds] [tokens]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tileops/ops/attention.hpp"

namespace {

constexpr std::int64_t kHeads = 32, kKvHeads = 8, kHeadDim = 128;

int positive_arg(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[index], &end, 10);
  if (*end != '\0' || v < 1 || v > 1000000) {
    std::fprintf(stderr, "attention_cpu_bench: argument %d must be an integer in [1, 1000000], got '%s'\n", index,
                 argv[index]);
    std::exit(2);
  }
  return static_cast<int>(v);
}

double seconds_of(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

torch::Tensor view(const tileops::Tensor& t) {
  const auto dtype = t.dtype() == tileops::DType::bfloat16 ? torch::kBFloat16 : torch::kFloat32;
  return torch::from_blob(t.data_ptr(), std::vector<std::int64_t>(t.shape().begin(), t.shape().end()), dtype);
}

struct Row {
  std::string name;
  std::int64_t tokens;
  bool causal;
  tileops::DType dtype;
  std::vector<double> tileops_s, torch_s;
  double max_diff = 0;
};

void run_round(Row& row, bool measure) {
  using tileops::Tensor;
  const std::int64_t s = row.tokens;
  const auto torch_dtype = row.dtype == tileops::DType::bfloat16 ? torch::kBFloat16 : torch::kFloat32;
  torch::manual_seed(7);
  const torch::Tensor q = torch::randn({1, s, kHeads, kHeadDim}).to(torch_dtype);
  const torch::Tensor k = torch::randn({1, s, kKvHeads, kHeadDim}).to(torch_dtype);
  const torch::Tensor v = torch::randn({1, s, kKvHeads, kHeadDim}).to(torch_dtype);
  const auto copy = [&](const torch::Tensor& t) {
    Tensor out = Tensor::empty(std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()), row.dtype);
    view(out).copy_(t);
    return out;
  };
  const Tensor tq = copy(q), tk = copy(k), tv = copy(v);
  // libtorch's inputs: [B, H, S, D], key/value heads repeated, the mask made once.
  const std::int64_t group = kHeads / kKvHeads;
  const torch::Tensor bq = q.transpose(1, 2).contiguous();
  const torch::Tensor bk = k.transpose(1, 2).repeat_interleave(group, 1).contiguous();
  const torch::Tensor bv = v.transpose(1, 2).repeat_interleave(group, 1).contiguous();
  const torch::Tensor mask = torch::ones({s, s}, torch::kBool).triu(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));

  tileops::GroupedQueryAttentionFwdOp op(row.causal);
  Tensor ours;
  torch::Tensor theirs;
  const double t0 = seconds_of([&] { ours = op(tq, tk, tv).o; });
  const double t1 = seconds_of([&] {
    torch::Tensor scores = torch::matmul(bq, bk.transpose(-2, -1)).mul_(scale);
    if (row.causal) scores.masked_fill_(mask, -std::numeric_limits<double>::infinity());
    theirs = torch::matmul(torch::softmax(scores, -1), bv);
  });
  if (!measure) return;
  row.tileops_s.push_back(t0);
  row.torch_s.push_back(t1);
  const torch::Tensor a = view(ours).to(torch::kFloat32).transpose(1, 2);
  row.max_diff = std::max(row.max_diff, (a - theirs.to(torch::kFloat32)).abs().max().item<double>());
}

// One decode step of `batch` sequences of `context` cached tokens each: GroupedQueryAttentionDecodeFwdOp
// against libtorch's composed decode on the same cache, each query head group against its
// key/value head ([B, Hkv, group, D] times [B, Hkv, D, L]), the cache already [B, Hkv, L, D].
struct DecodeRow {
  std::int64_t batch, context;
  tileops::DType dtype;
  std::vector<double> tileops_s, torch_s;
  double max_diff = 0;
};

void run_decode_round(DecodeRow& row, bool measure) {
  using tileops::Tensor;
  const auto torch_dtype = row.dtype == tileops::DType::bfloat16 ? torch::kBFloat16 : torch::kFloat32;
  const std::int64_t b = row.batch, l = row.context, group = kHeads / kKvHeads;
  torch::manual_seed(11);
  const torch::Tensor q = torch::randn({b, kHeads, kHeadDim}).to(torch_dtype);
  const torch::Tensor k = torch::randn({b, l, kKvHeads, kHeadDim}).to(torch_dtype);
  const torch::Tensor v = torch::randn({b, l, kKvHeads, kHeadDim}).to(torch_dtype);
  const auto copy = [&](const torch::Tensor& t) {
    Tensor out = Tensor::empty(std::vector<std::int64_t>(t.sizes().begin(), t.sizes().end()), row.dtype);
    view(out).copy_(t);
    return out;
  };
  const Tensor tq = copy(q), tk = copy(k), tv = copy(v);
  Tensor lens = Tensor::empty({b}, tileops::DType::int32);
  for (std::int64_t i = 0; i < b; ++i) lens.data<std::int32_t>()[i] = static_cast<std::int32_t>(l);
  const torch::Tensor gq = q.view({b, kKvHeads, group, kHeadDim});
  const torch::Tensor gk = k.transpose(1, 2).contiguous(), gv = v.transpose(1, 2).contiguous();
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
  tileops::GroupedQueryAttentionDecodeFwdOp op;
  Tensor ours;
  torch::Tensor theirs;
  const double t0 = seconds_of([&] { ours = op(tq, tk, tv, lens); });
  const double t1 = seconds_of([&] {
    theirs = torch::matmul(torch::softmax(torch::matmul(gq, gk.transpose(-2, -1)).mul_(scale), -1), gv);
  });
  if (!measure) return;
  row.tileops_s.push_back(t0);
  row.torch_s.push_back(t1);
  const torch::Tensor a = view(ours).to(torch::kFloat32);
  row.max_diff = std::max(row.max_diff, (a - theirs.reshape({b, kHeads, kHeadDim}).to(torch::kFloat32)).abs().max().item<double>());
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = positive_arg(argc, argv, 1, 5);
  const int tokens = positive_arg(argc, argv, 2, 2048);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  std::vector<Row> rows;
  for (tileops::DType dtype : {tileops::DType::float32, tileops::DType::bfloat16}) {
    for (bool causal : {true, false}) {
      rows.push_back({std::string(causal ? "causal" : "full") + " " + std::string(tileops::dtype_name(dtype)), tokens,
                      causal, dtype, {}, {}, 0});
    }
  }
  for (Row& row : rows) run_round(row, false);  // warm up: plugin load, kernel builds, thread pools
  for (int r = 0; r < rounds; ++r) {
    for (Row& row : rows) run_round(row, true);
  }
  std::printf("Prefill attention, Llama-3.1-8B heads (32 q, 8 kv, d 128), batch 1, %d tokens, %d threads, median of "
              "%d interleaved rounds\n\n",
              tokens, threads, rounds);
  std::printf("| case | tileops ms | TFLOP/s | libtorch composed ms | TFLOP/s | speedup | max abs diff |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Row& row : rows) {
    const double pairs = row.causal ? static_cast<double>(row.tokens) * static_cast<double>(row.tokens + 1) / 2
                                    : static_cast<double>(row.tokens) * static_cast<double>(row.tokens);
    const double flops = 4.0 * kHeadDim * kHeads * pairs;
    const double a = median(row.tileops_s), b = median(row.torch_s);
    std::printf("| %s | %.1f | %.3f | %.1f | %.3f | %.2fx | %.2g |\n", row.name.c_str(), a * 1e3, flops / a / 1e12,
                b * 1e3, flops / b / 1e12, b / a, row.max_diff);
  }
  std::printf("\nFLOPs count the (row, key) pairs each mask leaves, 4 * d per pair, for both.\n");

  std::vector<DecodeRow> decode_rows;
  for (tileops::DType dtype : {tileops::DType::bfloat16, tileops::DType::float32}) {
    decode_rows.push_back({1, 32768, dtype, {}, {}, 0});
    decode_rows.push_back({32, 4096, dtype, {}, {}, 0});
  }
  for (DecodeRow& row : decode_rows) run_decode_round(row, false);
  for (int r = 0; r < rounds; ++r) {
    for (DecodeRow& row : decode_rows) run_decode_round(row, true);
  }
  std::printf("\nDecode step, same heads, every sequence at its full context, median of %d interleaved rounds\n\n", rounds);
  std::printf("| case | tileops ms | cache GB/s | libtorch composed ms | cache GB/s | speedup | max abs diff |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const DecodeRow& row : decode_rows) {
    const double bytes = 2.0 * static_cast<double>(row.batch * row.context * kKvHeads * kHeadDim) *
                         static_cast<double>(tileops::dtype_size(row.dtype));
    const double a = median(row.tileops_s), b = median(row.torch_s);
    std::printf("| batch %lld, context %lld, %s | %.2f | %.1f | %.2f | %.1f | %.2fx | %.2g |\n",
                static_cast<long long>(row.batch), static_cast<long long>(row.context),
                std::string(tileops::dtype_name(row.dtype)).c_str(), a * 1e3, bytes / a / 1e9, b * 1e3, bytes / b / 1e9,
                b / a, row.max_diff);
  }
  std::printf("\nCache GB/s: the keys and values read (2 * batch * context * 8 * 128 elements) over the time.\n");
  return 0;
}
