// An application embedding tileops: one Llama-style block — RMSNorm, the SwiGLU MLP, the
// residual add — on random weights of a real model's size, with the device and target chosen
// at run time. It prints which plugins loaded, then per op the serving target, the kernels,
// the time and the roofline figures, and checks the block's output against the reference
// kernels, which run on host copies of the inputs whatever the device (cuda:0, say).
//
//   embed_llama_block [--device cpu|cuda:0|acme:0|...] [--target NAME|builtin|reference]
//                     [--config FILE] [--tokens N] [--dtype bfloat16|float16|float32]
//                     [--hidden H] [--intermediate I]
// Defaults: Llama-3.1-8B (hidden 4096, intermediate 14336), 4 tokens, bfloat16, cpu.
#include <cstdio>
#include <iostream>
#include <string>

#include "demo_support.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/testing.hpp"
#include "tileops/version.hpp"

using namespace tileops;

namespace {

struct Options : demo::CommonOptions {
  std::int64_t tokens = 4;
  std::int64_t hidden = 4096;
  std::int64_t intermediate = 14336;
};

Options parse(int argc, char** argv) {
  const demo::CommandLine cl{
      "embed_llama_block", "runs one Llama-style block",
      "usage: embed_llama_block [--device DEV] [--target NAME|builtin|reference] [--config FILE]\n"
      "                         [--tokens N] [--dtype DTYPE] [--hidden H] [--intermediate I]\n"};
  Options o;
  demo::parse(cl, argc, argv, o, [&](const std::string& flag, const std::string& value) {
    if (flag == "--tokens") o.tokens = std::stoll(value);
    else if (flag == "--hidden") o.hidden = std::stoll(value);
    else if (flag == "--intermediate") o.intermediate = std::stoll(value);
    else return false;
    return true;
  });
  if (o.tokens <= 0 || o.hidden <= 0 || o.intermediate <= 0) demo::usage(cl, "sizes must be positive");
  return o;
}

struct Block {
  std::unique_ptr<RMSNormFwdOp> norm;
  std::unique_ptr<SwiGLUMLPFwdOp> mlp;
  std::unique_ptr<AddFwdOp> residual;

  Block(const Options& o, const Target& target)
      : norm(std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{o.hidden}, 1e-5, target)),
        mlp(std::make_unique<SwiGLUMLPFwdOp>(target)),
        residual(std::make_unique<AddFwdOp>(std::int64_t{1}, target)) {}
};

void report(const char* name, const Op& op, double seconds) {
  const Roofline r = op.eval_roofline();
  std::printf("%-16s %-10s %9.3f %9.2f %9.2f   %s\n", name, op.serving_target().value_or("-").c_str(), seconds * 1e3,
              r.bytes / seconds / 1e9, r.flops / seconds / 1e9, demo::kernels_of(op).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    const Config cfg = demo::start(o);
    const Device device = Device::parse(o.device);

    std::printf("tileops %s: Llama-style block (hidden %lld, intermediate %lld), %lld tokens, %s on %s\n", kVersion,
                static_cast<long long>(o.hidden), static_cast<long long>(o.intermediate),
                static_cast<long long>(o.tokens), std::string(dtype_name(o.dtype)).c_str(), device.str().c_str());
    demo::print_backends(cfg);

    const Tensor x = demo::random({o.tokens, o.hidden}, o.dtype, device, 1.0f, 1);
    const Tensor norm_weight = demo::random({o.hidden}, o.dtype, device, 1.0f, 2);
    const Tensor w_gate_up = demo::random({2 * o.intermediate, o.hidden}, o.dtype, device, 0.02f, 3);
    const Tensor w_down = demo::random({o.hidden, o.intermediate}, o.dtype, device, 0.02f, 4);

    Block block(o, o.target);
    auto run = [](Block& b, const Tensor& x, const Tensor& norm_weight, const Tensor& w_gate_up, const Tensor& w_down) {
      return (*b.residual)(x, (*b.mlp)((*b.norm)(x, norm_weight), w_gate_up, w_down));
    };
    run(block, x, norm_weight, w_gate_up, w_down);  // the first call selects targets and builds kernels
    std::printf("\n%-16s %-10s %9s %9s %9s   %s\n", "op", "target", "ms", "GB/s", "GFLOP/s", "kernels");
    Tensor h, m, y;
    report("RMSNormFwdOp", *block.norm, demo::timed(device, [&] { h = (*block.norm)(x, norm_weight); }));
    report("SwiGLUMLPFwdOp", *block.mlp, demo::timed(device, [&] { m = (*block.mlp)(h, w_gate_up, w_down); }));
    report("AddFwdOp", *block.residual, demo::timed(device, [&] { y = (*block.residual)(x, m); }));

    // The reference kernels run on the host: copies of the same inputs.
    Block reference(o, std::string(REFERENCE));
    const Device cpu = Device::cpu();
    const Tensor want = run(reference, x.to(cpu), norm_weight.to(cpu), w_gate_up.to(cpu), w_down.to(cpu));
    const testing::Comparison c = testing::compare(y, want);
    std::printf("\ncheck against the reference kernels: max abs error %.3g, max rel error %.3g (tolerance %.0e): %s\n",
                c.max_abs, c.max_rel, testing::tolerance(o.dtype), c.ok ? "PASS" : "FAIL");
    return c.ok ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "embed_llama_block: " << e.what() << "\n";
    return 1;
  }
}
