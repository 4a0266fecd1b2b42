// An application embedding tileops: one whole Llama decoder layer — RMSNorm, the QKV GEMM, RoPE,
// attention over a KV cache, the O GEMM, the residual add, RMSNorm, the SwiGLU MLP, the residual
// add — on random weights of a real model's size. It prefills a prompt of N tokens (their keys
// and values appended to the cache, causal attention over it), then runs M decode steps, each
// appending one token's keys and values and attending over the whole cache; --batch runs that many
// sequences side by side (the same prompt length, so one set of positions). The device and the
// target are chosen at run time. It prints the plugins that loaded, per op the serving target,
// time, roofline figures and kernels of the prefill and of a decode step, and checks every
// step's output and the final cache against the same layer on the reference kernels, which run
// on host copies of the inputs whatever the device.
//
//   embed_llama_layer [--device cpu|cuda:0|...] [--target NAME|builtin|reference] [--config FILE]
//                     [--prompt N] [--steps M] [--batch B] [--dtype bfloat16|float16|float32]
//                     [--no-check]
// Defaults: Llama-3.1-8B (hidden 4096, 32 query and 8 key/value heads of 128, intermediate
// 14336, RoPE theta 500000), one sequence, a prompt of 16 tokens and 8 decode steps, bfloat16,
// cpu.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "demo_support.hpp"
#include "tileops/config.hpp"
#include "tileops/device_graph.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/op_class.hpp"
#include "tileops/ops/attention.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/rope.hpp"
#include "tileops/ops/swiglu_mlp.hpp"
#include "tileops/testing.hpp"
#include "tileops/version.hpp"

using namespace tileops;

namespace {

struct Options : demo::CommonOptions {
  std::int64_t prompt = 16;
  std::int64_t steps = 8;
  std::int64_t batch = 1;
  bool check = true;  // --no-check: time only (the reference takes minutes for long prompts)
};

// Llama-3.1-8B.
constexpr std::int64_t kHidden = 4096, kHeads = 32, kKvHeads = 8, kHeadDim = 128, kIntermediate = 14336;
constexpr double kRopeTheta = 500000.0, kNormEps = 1e-5;

Options parse(int argc, char** argv) {
  const demo::CommandLine cl{
      "embed_llama_layer", "runs one Llama decoder layer: a prefill, then decode steps",
      "usage: embed_llama_layer [--device DEV] [--target NAME|builtin|reference] [--config FILE]\n"
      "                         [--prompt N] [--steps M] [--batch B] [--dtype DTYPE] [--no-check]\n"};
  Options o;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-check") o.check = false;
    else args.push_back(argv[i]);
  }
  demo::parse(cl, static_cast<int>(args.size()), args.data(), o, [&](const std::string& flag, const std::string& value) {
    if (flag == "--prompt") o.prompt = std::stoll(value);
    else if (flag == "--steps") o.steps = std::stoll(value);
    else if (flag == "--batch") o.batch = std::stoll(value);
    else return false;
    return true;
  });
  if (o.prompt < 1 || o.prompt > 32768) demo::usage(cl, "--prompt must be from 1 to 32768 tokens");
  if (o.steps < 0 || o.steps > 32768) demo::usage(cl, "--steps must be from 0 to 32768");
  if (o.batch < 1 || o.batch > 256) demo::usage(cl, "--batch must be from 1 to 256 sequences");
  if (o.batch * (o.prompt + o.steps) > 65536 * 2) {
    demo::usage(cl, "--batch times (--prompt + --steps) must be at most 131072 cached tokens");
  }
  return o;
}

struct Weights {
  Tensor attn_norm, qkv, o, mlp_norm, gate_up, down;
};

Weights random_weights(DType dtype, const Device& device) {
  return {demo::random({kHidden}, dtype, device, 1.0f, 1),
          demo::random({(kHeads + 2 * kKvHeads) * kHeadDim, kHidden}, dtype, device, 0.02f, 2),
          demo::random({kHidden, kHeads * kHeadDim}, dtype, device, 0.02f, 3),
          demo::random({kHidden}, dtype, device, 1.0f, 4),
          demo::random({2 * kIntermediate, kHidden}, dtype, device, 0.02f, 5),
          demo::random({kHidden, kIntermediate}, dtype, device, 0.02f, 6)};
}

Weights host_copies(const Weights& w) {
  const Device cpu = Device::cpu();
  return {w.attn_norm.to(cpu), w.qkv.to(cpu), w.o.to(cpu), w.mlp_norm.to(cpu), w.gate_up.to(cpu), w.down.to(cpu)};
}

// The sequences' keys and values, [batch, capacity, Hkv, D], and how many positions of each hold
// tokens.
struct KvCache {
  Tensor k, v;
  std::int64_t length = 0;
};

// What a step reads besides its input, on the device: the new tokens' positions (int64 [T], the
// same in every sequence), the cached length they are appended after (int32 [batch]) and the
// length decode attends over (int32 [batch]). A device-graph replay reads them from the same
// buffers each time.
struct StepIndices {
  Tensor positions, cached, seen;
};

Tensor int_tensor(std::vector<double> values, DType dtype, const Device& device) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Tensor::from_doubles(values, {n}, dtype).to(device);
}

StepIndices indices_for(std::int64_t cached, std::int64_t tokens, std::int64_t batch, const Device& device) {
  std::vector<double> positions(static_cast<std::size_t>(tokens));
  for (std::int64_t i = 0; i < tokens; ++i) positions[static_cast<std::size_t>(i)] = static_cast<double>(cached + i);
  const auto each = [&](std::int64_t length) {
    return std::vector<double>(static_cast<std::size_t>(batch), static_cast<double>(length));
  };
  return {int_tensor(positions, DType::int64, device), int_tensor(each(cached), DType::int32, device),
          int_tensor(each(cached + tokens), DType::int32, device)};
}

// The ops of the layer, in the order a step calls them, with the time of each one's last call.
struct Layer {
  RMSNormFwdOp attn_norm;
  GemmFwdOp qkv;
  RopeFwdOp rope;
  KVCacheAppendFwdOp append;
  GroupedQueryAttentionFwdOp prefill;
  GroupedQueryAttentionDecodeFwdOp decode;
  GemmFwdOp o_proj;
  AddFwdOp attn_residual;
  RMSNormFwdOp mlp_norm;
  SwiGLUMLPFwdOp mlp;
  AddFwdOp mlp_residual;
  Device device;
  std::map<const Op*, double> seconds;
  bool timing = true;  // off while a device graph records: timing waits for the device

  Layer(const Target& t, const Device& d)
      : attn_norm({kHidden}, kNormEps, t),
        qkv(false, true, t),
        rope(kRopeTheta, "BSHD", t),
        append(t),
        prefill(true, std::nullopt, -1, std::nullopt, false, t),
        decode(std::nullopt, -1, std::nullopt, t),
        o_proj(false, true, t),
        attn_residual(std::int64_t{1}, t),
        mlp_norm({kHidden}, kNormEps, t),
        mlp(t),
        mlp_residual(std::int64_t{1}, t),
        device(d) {}

  template <class F>
  auto time(const Op& op, F&& f) {
    if (!timing) return f();
    decltype(f()) out;
    seconds[&op] = demo::timed(device, [&] { out = f(); });
    return out;
  }

  // The layer on x [batch * T, hidden], each sequence's T tokens after its cached ones: a
  // prefill when the cache is empty and T > 1 (causal attention over the new tokens), a decode
  // step when T is 1.
  Tensor step(const Weights& w, KvCache& cache, const Tensor& x, const StepIndices& at) {
    const std::int64_t batch = cache.k.shape()[0], t = x.shape()[0] / batch;
    const std::int64_t q_width = kHeads * kHeadDim, kv_width = kKvHeads * kHeadDim;
    const Tensor h = time(attn_norm, [&] { return attn_norm(x, w.attn_norm); });
    const Tensor qkv_out = time(qkv, [&] { return qkv(h, w.qkv); });
    const auto heads = [&](std::int64_t from, std::int64_t width, std::int64_t n) {
      return qkv_out.slice(1, from, from + width).contiguous().view({batch, t, n, kHeadDim});
    };
    const Tensor q = time(rope, [&] { return rope(heads(0, q_width, kHeads), at.positions); });
    const Tensor k = rope(heads(q_width, kv_width, kKvHeads), at.positions);
    const Tensor v = heads(q_width + kv_width, kv_width, kKvHeads);
    time(append, [&] { return append(cache.k, cache.v, k, v, at.cached).k_cache_out; });
    Tensor o;
    if (t == 1) {
      o = time(decode, [&] { return decode(q.view({batch, kHeads, kHeadDim}), cache.k, cache.v, at.seen); });
    } else {
      // The cache was empty: the new tokens' keys and values are all there is to attend over.
      o = time(prefill, [&] { return prefill(q, k, v).o; });
    }
    cache.length += t;
    const Tensor attn = time(o_proj, [&] { return o_proj(o.view({batch * t, q_width}), w.o); });
    const Tensor x1 = time(attn_residual, [&] { return attn_residual(x, attn); });
    const Tensor h2 = time(mlp_norm, [&] { return mlp_norm(x1, w.mlp_norm); });
    const Tensor m = time(mlp, [&] { return mlp(h2, w.gate_up, w.down); });
    return time(mlp_residual, [&] { return mlp_residual(x1, m); });
  }
};

KvCache empty_cache(std::int64_t batch, std::int64_t capacity, DType dtype, const Device& device) {
  return {Tensor::zeros({batch, capacity, kKvHeads, kHeadDim}, dtype, device),
          Tensor::zeros({batch, capacity, kKvHeads, kHeadDim}, dtype, device), 0};
}

void report(const char* name, Layer& layer, const Op& op) {
  const double s = layer.seconds[&op];
  const Roofline r = op.eval_roofline();
  std::printf("  %-33s %-10s %9.3f %9.2f %9.2f   %s\n", name, op.serving_target().value_or("-").c_str(), s * 1e3,
              r.bytes / s / 1e9, r.flops / s / 1e9, demo::kernels_of(op).c_str());
}

void report_step(const char* title, Layer& layer, bool decode_step) {
  std::printf("\n%s\n  %-33s %-10s %9s %9s %9s   %s\n", title, "op", "target", "ms", "GB/s", "GFLOP/s", "kernels");
  report("RMSNormFwdOp (attention)", layer, layer.attn_norm);
  report("GemmFwdOp (QKV)", layer, layer.qkv);
  report("RopeFwdOp (q)", layer, layer.rope);
  report("KVCacheAppendFwdOp", layer, layer.append);
  if (decode_step) {
    report("GroupedQueryAttentionDecodeFwdOp", layer, layer.decode);
  } else {
    report("GroupedQueryAttentionFwdOp", layer, layer.prefill);
  }
  report("GemmFwdOp (O)", layer, layer.o_proj);
  report("AddFwdOp (attention residual)", layer, layer.attn_residual);
  report("RMSNormFwdOp (MLP)", layer, layer.mlp_norm);
  report("SwiGLUMLPFwdOp", layer, layer.mlp);
  report("AddFwdOp (MLP residual)", layer, layer.mlp_residual);
}

// The attention ops no kernel serves on `device` (none when a named target replaces the ops).
std::vector<std::string> ops_without_kernels(const Layer& layer, const Device& device, const Target& target) {
  if (target && !is_in_tree_target(*target)) return {};
  std::vector<std::string> missing;
  for (const Op* op : {static_cast<const Op*>(&layer.append), static_cast<const Op*>(&layer.prefill),
                       static_cast<const Op*>(&layer.decode)}) {
    bool served = false;
    for (const auto& [key, type] : op->op_class().kernel_types()) {
      for (const std::string& d : type->devices) served = served || d == device.type().name();
    }
    for (const RegisteredKernelType& r : registered_kernel_types(op->name())) {
      for (const std::string& d : r.type->devices) served = served || d == device.type().name();
    }
    if (!served) missing.push_back(op->name());
  }
  return missing;
}

// The decode steps again, each a replay of one device graph that recorded a decode step: a
// fresh cache is prefilled eagerly, the step is recorded over buffers for its input and
// indices, and each replay runs after new values are copied into them. Prints the time per
// replay against the eager steps' and checks that every replay's output equals the eager step's.
bool replay_decode_steps(Layer& layer, const Weights& w, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& eager, const Options& o, const Device& device) {
  KvCache cache = empty_cache(o.batch, o.prompt + o.steps, o.dtype, device);
  layer.step(w, cache, inputs[0], indices_for(0, o.prompt, o.batch, device));
  const Tensor x = inputs[1].clone();
  const StepIndices at = indices_for(cache.length, 1, o.batch, device);
  const DeviceGraph graph = DeviceGraph::capture(device, [&] {
    return std::vector<Tensor>{layer.step(w, cache, x, at)};
  });
  double seconds = 0;
  bool same = true;
  for (std::int64_t s = 1; s <= o.steps; ++s) {
    const std::int64_t cached = o.prompt + s - 1;
    const StepIndices next = indices_for(cached, 1, o.batch, device);
    x.copy_from(inputs[static_cast<std::size_t>(s)]);
    at.positions.copy_from(next.positions);
    at.cached.copy_from(next.cached);
    at.seen.copy_from(next.seen);
    seconds += demo::timed(device, [&] { graph.replay(); });
    same = same && testing::compare(graph.outputs()[0], eager[static_cast<std::size_t>(s)]).ok;
  }
  std::printf("decode step replayed from one device graph: %.3f ms each on average; outputs equal the eager steps': %s\n",
              seconds / static_cast<double>(o.steps) * 1e3, same ? "PASS" : "FAIL");
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    const Config cfg = demo::start(o);
    const Device device = Device::parse(o.device);
    std::printf("tileops %s: Llama-3.1-8B decoder layer (hidden %lld, %lld/%lld heads of %lld, intermediate %lld), "
                "%lld sequence(s), prefill of %lld tokens, %lld decode steps, %s on %s\n",
                kVersion, static_cast<long long>(kHidden), static_cast<long long>(kHeads),
                static_cast<long long>(kKvHeads), static_cast<long long>(kHeadDim), static_cast<long long>(kIntermediate),
                static_cast<long long>(o.batch), static_cast<long long>(o.prompt), static_cast<long long>(o.steps),
                std::string(dtype_name(o.dtype)).c_str(), device.str().c_str());
    demo::print_backends(cfg);

    if (find_device_runtime(device.type()) == nullptr) {
      std::printf("\nno loaded plugin brings device type %s, so the layer cannot run on %s\n",
                  std::string(device.type().name()).c_str(), device.str().c_str());
      return 1;
    }
    Layer layer(o.target, device);
    if (const auto missing = ops_without_kernels(layer, device, o.target); !missing.empty()) {
      std::string names;
      for (const std::string& n : missing) names += (names.empty() ? "" : ", ") + n;
      std::printf("\n%s has no attention kernels: no kernel of the loaded plugins serves %s on %s, so the layer "
                  "cannot run there (the other ops of the layer can: see embed_llama_block)\n",
                  std::string(device.type().name()).c_str(), names.c_str(), device.str().c_str());
      return 1;
    }

    const Weights w = random_weights(o.dtype, device);
    const std::int64_t capacity = o.prompt + o.steps;
    std::vector<Tensor> inputs{demo::random({o.batch * o.prompt, kHidden}, o.dtype, device, 1.0f, 10)};
    for (std::int64_t s = 0; s < o.steps; ++s) {
      inputs.push_back(demo::random({o.batch, kHidden}, o.dtype, device, 1.0f, 11 + static_cast<std::uint64_t>(s)));
    }

    // A warm-up pass selects targets and builds kernels. A second pass times each op of a
    // prefill and a decode step alone (waiting for the device before and after it); the run
    // that is timed and checked then times whole steps, waiting once a step.
    {
      KvCache warm = empty_cache(o.batch, capacity, o.dtype, device);
      layer.step(w, warm, inputs[0], indices_for(0, o.prompt, o.batch, device));
      if (o.steps > 0) layer.step(w, warm, inputs[1], indices_for(o.prompt, 1, o.batch, device));
    }
    {
      KvCache per_op = empty_cache(o.batch, capacity, o.dtype, device);
      layer.step(w, per_op, inputs[0], indices_for(0, o.prompt, o.batch, device));
      report_step("prefill", layer, false);
      if (o.steps > 0) {
        layer.step(w, per_op, inputs[1], indices_for(o.prompt, 1, o.batch, device));
        report_step("a decode step", layer, true);
      }
    }
    layer.timing = false;
    KvCache cache = empty_cache(o.batch, capacity, o.dtype, device);
    std::vector<Tensor> outputs;
    double prefill_s = 0, decode_s = 0;
    const StepIndices prompt_at = indices_for(0, o.prompt, o.batch, device);
    prefill_s = demo::timed(device, [&] { outputs.push_back(layer.step(w, cache, inputs[0], prompt_at)); });
    for (std::int64_t s = 1; s <= o.steps; ++s) {
      const StepIndices at = indices_for(cache.length, 1, o.batch, device);
      decode_s += demo::timed(device, [&] { outputs.push_back(layer.step(w, cache, inputs[static_cast<std::size_t>(s)], at)); });
    }
    std::printf("\nprefill of %lld tokens: %.3f ms; %lld decode steps: %.3f ms each on average\n",
                static_cast<long long>(o.prompt), prefill_s * 1e3, static_cast<long long>(o.steps),
                o.steps > 0 ? decode_s / static_cast<double>(o.steps) * 1e3 : 0.0);

    bool ok = true;
    if (!device.is_cpu() && o.steps > 0) ok = replay_decode_steps(layer, w, inputs, outputs, o, device);
    if (!o.check) {
      std::printf("check against the reference kernels: skipped (--no-check)\n");
      return ok ? 0 : 1;
    }

    // The same steps on the reference kernels, on host copies of the same inputs.
    const Device cpu = Device::cpu();
    Layer reference(std::string(REFERENCE), cpu);
    const Weights host_w = host_copies(w);
    KvCache host_cache = empty_cache(o.batch, capacity, o.dtype, cpu);
    double max_rel = 0;
    for (std::size_t s = 0; s < inputs.size(); ++s) {
      const std::int64_t tokens = inputs[s].shape()[0] / o.batch;
      const testing::Comparison c = testing::compare(
          outputs[s],
          reference.step(host_w, host_cache, inputs[s].to(cpu), indices_for(host_cache.length, tokens, o.batch, cpu)));
      ok = ok && c.ok;
      max_rel = std::max(max_rel, c.max_rel);
    }
    for (const auto& [got, want] : {std::pair{&cache.k, &host_cache.k}, std::pair{&cache.v, &host_cache.v}}) {
      const testing::Comparison c = testing::compare(*got, *want);
      ok = ok && c.ok;
      max_rel = std::max(max_rel, c.max_rel);
    }
    std::printf("check against the reference kernels (the prefill's and every decode step's output, the KV cache): "
                "max rel error %.3g (tolerance %.0e): %s\n",
                max_rel, testing::tolerance(o.dtype), ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "embed_llama_layer: " << e.what() << "\n";
    return 1;
  }
}
