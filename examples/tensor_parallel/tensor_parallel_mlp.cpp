// The Llama-3.1-8B MLP split over N ranks, as tensor-parallel serving runs it: each rank holds a
// column slice of the gate and up projections and the matching row slice of the down
// projection, computes a partial output with SwiGLUMLPFwdOp, and AllReduceFwdOp sums the
// partials. Every rank checks the sum against the unsplit MLP (same seeded weights) and, with
// --iters, times both.
//
// On GPUs it is one process per rank, each on its own device; rank 0 writes the group's id to
// --id-file and the others wait for it (bench/gpu/tensor_parallel.sh starts them):
//   tensor_parallel_mlp --device cuda:R --world N --rank R --id-file F [--tokens M] [--iters K]
// On the CPU the N ranks are threads of one process (Communicator::local_group):
//   tensor_parallel_mlp --device cpu --world N [--tokens M] [--hidden H] [--intermediate I]
// Defaults: Llama-3.1-8B (hidden 4096, intermediate 14336), 32 tokens, bfloat16, one rank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <thread>
#include <vector>

#include "demo_support.hpp"
#include "group_id.hpp"
#include "tileops/communicator.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/collective.hpp"
#include "tileops/ops/swiglu_mlp.hpp"

using namespace tileops;

namespace {

struct Options : demo::CommonOptions {
  std::int64_t tokens = 32;
  std::int64_t hidden = 4096;
  std::int64_t intermediate = 14336;
  int world = 1;
  int rank = 0;
  std::string id_file;
  int iters = 0;
};

const demo::CommandLine kCommandLine{
    "tensor_parallel_mlp", "runs the Llama MLP split over ranks and checks it against the unsplit MLP",
    "usage: tensor_parallel_mlp [--device cpu|cuda:R] [--world N] [--rank R] [--id-file FILE]\n"
    "                           [--tokens M] [--hidden H] [--intermediate I] [--dtype DTYPE] [--iters K]\n"};

Options parse(int argc, char** argv) {
  Options o;
  o.device = "cpu";
  demo::parse(kCommandLine, argc, argv, o, [&](const std::string& flag, const std::string& value) {
    if (flag == "--tokens") o.tokens = std::stoll(value);
    else if (flag == "--hidden") o.hidden = std::stoll(value);
    else if (flag == "--intermediate") o.intermediate = std::stoll(value);
    else if (flag == "--world") o.world = std::stoi(value);
    else if (flag == "--rank") o.rank = std::stoi(value);
    else if (flag == "--id-file") o.id_file = value;
    else if (flag == "--iters") o.iters = std::stoi(value);
    else return false;
    return true;
  });
  if (o.tokens <= 0 || o.hidden <= 0 || o.intermediate <= 0) demo::usage(kCommandLine, "sizes must be positive");
  if (o.world < 1 || o.world > 256) demo::usage(kCommandLine, "--world must be from 1 to 256");
  if (o.rank < 0 || o.rank >= o.world) demo::usage(kCommandLine, "--rank must be from 0 to --world - 1");
  if (o.intermediate % o.world != 0) demo::usage(kCommandLine, "--world must divide --intermediate");
  if (o.iters < 0 || o.iters > 100000) demo::usage(kCommandLine, "--iters must be from 0 to 100000");
  return o;
}

// The full weights, on the host, the same on every rank.
struct Weights {
  Tensor x, gate_up, down;  // x [M, H], gate_up [2I, H] (gate rows, then up rows), down [H, I]
};

Weights full_weights(const Options& o) {
  const Device cpu = Device::cpu();
  return {demo::random({o.tokens, o.hidden}, o.dtype, cpu, 1.0f, 1),
          demo::random({2 * o.intermediate, o.hidden}, o.dtype, cpu, 1.0f / std::sqrt(static_cast<float>(o.hidden)), 2),
          demo::random({o.hidden, o.intermediate}, o.dtype, cpu,
                       1.0f / std::sqrt(static_cast<float>(o.intermediate)), 3)};
}

// Rank `rank`'s slices: gate and up rows [rank * I/N, (rank + 1) * I/N), and those columns of down.
std::pair<Tensor, Tensor> rank_slices(const Weights& w, const Options& o, int rank) {
  const std::int64_t part = o.intermediate / o.world;
  const std::int64_t first = rank * part;
  Tensor gate_up = Tensor::empty({2 * part, o.hidden}, o.dtype);
  gate_up.slice(0, 0, part).copy_from(w.gate_up.slice(0, first, first + part));
  gate_up.slice(0, part, 2 * part).copy_from(w.gate_up.slice(0, o.intermediate + first, o.intermediate + first + part));
  return {gate_up, w.down.slice(1, first, first + part).contiguous()};
}

double max_abs(const Tensor& t) {
  const Tensor h = t.to(Device::cpu()).to(DType::float32);
  double m = 0;
  for (std::int64_t i = 0; i < h.numel(); ++i) m = std::max(m, std::abs(h.get(i)));
  return m;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor ha = a.to(Device::cpu()).to(DType::float32);
  const Tensor hb = b.to(Device::cpu()).to(DType::float32);
  double m = 0;
  for (std::int64_t i = 0; i < ha.numel(); ++i) m = std::max(m, std::abs(ha.get(i) - hb.get(i)));
  return m;
}

double median_ms(const Device& device, int iters, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) ms.push_back(demo::timed(device, f) * 1e3);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// One rank's run: returns true when its tensor-parallel output matches the unsplit MLP.
bool run_rank(const Options& o, const Weights& w, const Communicator& comm) {
  const Device& device = comm.device();
  const auto [gate_up_part, down_part] = rank_slices(w, o, comm.rank());
  const Tensor x = w.x.to(device);
  const Tensor gate_up = gate_up_part.to(device);
  const Tensor down = down_part.to(device);
  SwiGLUMLPFwdOp mlp(o.target);
  AllReduceFwdOp all_reduce(comm.key(), "sum", true, o.target);
  const auto tensor_parallel = [&] { return all_reduce(mlp(x, gate_up, down)); };
  const Tensor y = tensor_parallel();

  SwiGLUMLPFwdOp unsplit_mlp(o.target);
  const Tensor full_gate_up = w.gate_up.to(device);
  const Tensor full_down = w.down.to(device);
  const Tensor expected = unsplit_mlp(x, full_gate_up, full_down);
  // The partial sums round to the dtype once per rank before the reduction adds them.
  const double tolerance = (o.dtype == DType::float32 ? 1e-4 : 3e-2) * std::max(1.0, max_abs(expected));
  const double diff = max_abs_diff(y, expected);
  const bool ok = diff <= tolerance;
  std::printf("rank %d of %d on %s: max |tensor-parallel - unsplit| = %.3g (tolerance %.3g): %s; kernels %s, %s\n",
              comm.rank(), comm.size(), device.str().c_str(), diff, tolerance, ok ? "ok" : "MISMATCH",
              demo::kernels_of(mlp).c_str(), demo::kernels_of(all_reduce).c_str());
  if (o.iters > 0) {
    const double split_ms = median_ms(device, o.iters, [&] { tensor_parallel(); });
    const double unsplit_ms = median_ms(device, o.iters, [&] { unsplit_mlp(x, full_gate_up, full_down); });
    std::printf("rank %d timing: world %d tokens %lld: tensor-parallel %.3f ms, unsplit %.3f ms (median of %d)\n",
                comm.rank(), comm.size(), static_cast<long long>(o.tokens), split_ms, unsplit_ms, o.iters);
  }
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    demo::start(o);
    const Device device = Device::parse(o.device);
    std::printf("Llama MLP (hidden %lld, intermediate %lld), %lld tokens, %s, split over %d rank(s)\n",
                static_cast<long long>(o.hidden), static_cast<long long>(o.intermediate),
                static_cast<long long>(o.tokens), std::string(dtype_name(o.dtype)).c_str(), o.world);
    const Weights w = full_weights(o);
    if (device.is_cpu()) {
      const std::vector<std::shared_ptr<Communicator>> group = Communicator::local_group(o.world);
      std::vector<char> ok(static_cast<std::size_t>(o.world), 0);
      std::vector<std::string> failures(static_cast<std::size_t>(o.world));
      std::vector<std::thread> ranks;
      for (int r = 0; r < o.world; ++r) {
        ranks.emplace_back([&, r] {
          try {
            ok[static_cast<std::size_t>(r)] = run_rank(o, w, *group[static_cast<std::size_t>(r)]);
          } catch (const std::exception& e) {
            failures[static_cast<std::size_t>(r)] = e.what();
          }
        });
      }
      for (std::thread& t : ranks) t.join();
      for (const std::string& f : failures) {
        if (!f.empty()) throw RuntimeError(f);
      }
      return std::all_of(ok.begin(), ok.end(), [](char v) { return v != 0; }) ? 0 : 1;
    }
    const CommunicatorId id = demo::exchange_group_id(o.id_file, o.world, o.rank, device.type());
    const std::shared_ptr<Communicator> comm = Communicator::join(device, id, o.world, o.rank);
    return run_rank(o, w, *comm) ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "tensor_parallel_mlp: %s: %s\n", std::string(error_kind(e)).c_str(), e.what());
    return 1;
  }
}
