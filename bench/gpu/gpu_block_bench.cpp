// Times GEMM and the Llama-3.1-8B block on one GPU through tileops and prints one JSON object
// per line: this run's device-to-device copy bandwidth, then each GEMM shape (decode: a few
// rows against [n, k] weights; prefill) per dtype with its kernel, then every GEMM kernel type
// that serves a decode shape timed alone (the evidence for their preferred_over), then the block (RMSNorm →
// SwiGLU MLP → residual add) at 4 and 2048 tokens, eager and replayed as a CUDA graph.
// bench/gpu/compare_torch.py runs it and times PyTorch on the same shapes and values.
//
// Values: element i of each tensor is scale * ((i * mult) % 2001 / 1000 - 1), computed in
// float32 and rounded to the dtype, so that PyTorch builds the very same tensors (fill() in
// compare_torch.py); the block rows print the sum of their output for the comparison.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/graph.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/swiglu_mlp.hpp"

namespace {

using namespace tileops;
using bench::time_calls;
const Device kGpu = Device::parse("cuda:0");

Tensor fill(const Shape& shape, DType dtype, std::int64_t mult, float scale) {
  Tensor host = Tensor::empty(shape, DType::float32);
  float* p = host.data<float>();
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    p[i] = scale * (static_cast<float>((i * mult) % 2001) / 1000.0f - 1.0f);
  }
  return host.to(dtype).to(kGpu);
}

std::string kernels_of(const Op& op) {
  std::string s;
  for (const InterfaceDecl& d : op.op_class().interfaces()) {
    for (const BuiltEntry& e : op.built_entries(d.name)) s += (s.empty() ? "" : ",") + e.key;
  }
  for (Op* sub : op.held_delegates()) s += (s.empty() ? "" : ",") + kernels_of(*sub);
  return s;
}

void gemm_rows() {
  struct Shape3 {
    std::int64_t m, n, k;
    const char* kind;
  };
  const Shape3 shapes[] = {{1, 28672, 4096, "decode"},  {4, 28672, 4096, "decode"},   {4, 4096, 14336, "decode"},
                           {2048, 4096, 4096, "prefill"}, {8192, 8192, 8192, "prefill"}};
  for (DType dtype : {DType::bfloat16, DType::float16}) {
    for (const Shape3& s : shapes) {
      GemmFwdOp op(false, true);  // d = a · b^T, b the weights [n, k]
      const Tensor a = fill({s.m, s.k}, dtype, 7919, 1.0f), b = fill({s.n, s.k}, dtype, 104729, 0.02f);
      op(a, b);
      const Roofline r = op.eval_roofline();
      const double ms = time_calls([&](int) { op(a, b); }, 1);
      std::printf(
          "{\"kind\": \"gemm\", \"case\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\", "
          "\"ms\": %.6f, \"bytes\": %.0f, \"flops\": %.0f, \"kernel\": \"%s\"}\n",
          s.kind, static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
          std::string(dtype_name(dtype)).c_str(), ms, r.bytes, r.flops, kernels_of(op).c_str());
      std::fflush(stdout);
    }
  }
}

// Each cuda GEMM kernel type that takes the call, built and called directly (no dispatch), on
// the stream of the calls above: at the decode shapes, and at the prefill shapes, where the
// shared tiled GEMM (the hip plugin's) runs against cuBLASLt.
void kernel_rows() {
  struct Shape3 {
    const char* kind;
    std::int64_t m, n, k;
  };
  const Shape3 shapes[] = {{"decode_kernel", 1, 28672, 4096}, {"decode_kernel", 4, 28672, 4096},
                           {"decode_kernel", 8, 28672, 4096}, {"decode_kernel", 1, 4096, 14336},
                           {"decode_kernel", 4, 4096, 14336}, {"decode_kernel", 8, 4096, 14336},
                           {"prefill_kernel", 2048, 28672, 4096}, {"prefill_kernel", 2048, 4096, 14336}};
  for (DType dtype : {DType::bfloat16, DType::float16, DType::float32}) {
    for (const Shape3& s : shapes) {
      const Tensor a = fill({s.m, s.k}, dtype, 7919, 1.0f), b = fill({s.n, s.k}, dtype, 104729, 0.02f);
      const Tensor d = Tensor::empty({s.m, s.n}, dtype, kGpu);
      ops::GemmFwdOp::Gemm::Call call;
      call.device = kGpu;
      call.m = s.m;
      call.n = s.n;
      call.k = s.k;
      call.trans_b = true;
      call.dtype = dtype;
      const double bytes = static_cast<double>(dtype_size(dtype)) * static_cast<double>(s.m * s.k + s.n * s.k + s.m * s.n);
      const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
      for (const RegisteredKernelType& t : registered_kernel_types("GemmFwdOp")) {
        if (t.type->devices != std::vector<std::string>{"cuda"} || (t.type->refusal && t.type->refusal(call))) continue;
        const std::shared_ptr<Kernel> kernel = t.type->entry_for(call).factory();
        auto* gemm = static_cast<ops::GemmFwdOp::Gemm*>(t.type->as_interface(*kernel));
        const double ms = time_calls([&](int) { gemm->forward(a, b, d); }, 1);
        std::printf(
            "{\"kind\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\", "
            "\"key\": \"%s\", \"ms\": %.6f, \"bytes\": %.0f, \"flops\": %.0f}\n",
            s.kind, static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
            std::string(dtype_name(dtype)).c_str(), t.key.c_str(), ms, bytes, flops);
        std::fflush(stdout);
      }
    }
  }
}

struct Block {
  RMSNormFwdOp norm{{4096}, 1e-5};
  SwiGLUMLPFwdOp mlp;
  AddFwdOp residual;
  Tensor norm_weight, w_gate_up, w_down;

  explicit Block(DType dtype)
      : norm_weight(fill({4096}, dtype, 31, 1.0f)),
        w_gate_up(fill({2 * 14336, 4096}, dtype, 104729, 0.02f)),
        w_down(fill({4096, 14336}, dtype, 15485863, 0.02f)) {}

  Tensor operator()(const Tensor& x) { return residual(x, mlp(norm(x, norm_weight), w_gate_up, w_down)); }
  double bytes() const {
    return norm.eval_roofline().bytes + mlp.eval_roofline().bytes + residual.eval_roofline().bytes;
  }
};

double sum_of(const Tensor& t) {
  double s = 0;
  for (double v : t.to_doubles()) s += v;
  return s;
}

void block_rows() {
  const DType dtype = DType::bfloat16;
  Block block(dtype);
  for (std::int64_t tokens : {4, 2048}) {
    const Tensor x = fill({tokens, 4096}, dtype, 7919, 1.0f);
    const Tensor y = block(x);  // builds every kernel
    const double eager_ms = time_calls([&](int) { block(x); }, 1);

    const TensorSpec spec{kGpu, dtype, x.shape()};
    const Graph graph =
        Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) { return std::vector<Tensor>{block(in[0])}; });
    DeviceGraph recorded = DeviceGraph::capture(graph, {x});
    const double graph_ms = time_calls([&](int) { recorded.replay(); }, 1);
    bench::check(cudaDeviceSynchronize(), "replays");
    std::printf(
        "{\"kind\": \"block\", \"tokens\": %lld, \"dtype\": \"%s\", \"eager_ms\": %.6f, \"graph_ms\": %.6f, "
        "\"bytes\": %.0f, \"sum\": %.6e, \"graph_sum\": %.6e, \"kernels\": \"%s,%s,%s\"}\n",
        static_cast<long long>(tokens), std::string(dtype_name(dtype)).c_str(), eager_ms, graph_ms, block.bytes(),
        sum_of(y), sum_of(recorded.outputs()[0]), kernels_of(block.norm).c_str(), kernels_of(block.mlp).c_str(),
        kernels_of(block.residual).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main() {
  load_backends();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gpu_block_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  bench::check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("{\"kind\": \"copy\", \"device\": \"%s\", \"gbps\": %.1f}\n", prop.name, bench::copy_bandwidth_gbps());
  std::fflush(stdout);
  try {
    gemm_rows();
    kernel_rows();
    block_rows();
  } catch (const tileops::Error& e) {
    std::fprintf(stderr, "gpu_block_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
