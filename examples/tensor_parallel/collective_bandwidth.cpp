// Bandwidth of the collective ops over one process per GPU, measured as nccl-tests measures it:
// for a message of S bytes (AllReduce: the buffer; AllGather: the gathered output; ReduceScatter:
// the scattered input), algbw = S / time and busbw = algbw * 2(n-1)/n for AllReduce, (n-1)/n
// for the other two. Rank 0 prints one CSV line per collective and size.
//
//   collective_bandwidth --device cuda:R --world N --rank R --id-file F
//                        [--min-mib 1] [--max-mib 1024] [--iters 20] [--dtype bfloat16]
// bench/gpu/collective_bandwidth.sh starts the ranks and compares with torch.distributed.
#include <cstdio>
#include <filesystem>

#include "demo_support.hpp"
#include "group_id.hpp"
#include "tileops/communicator.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/collective.hpp"

using namespace tileops;

namespace {

struct Options : demo::CommonOptions {
  int world = 1;
  int rank = 0;
  std::string id_file;
  std::int64_t min_mib = 1;
  std::int64_t max_mib = 1024;
  int iters = 20;
};

const demo::CommandLine kCommandLine{
    "collective_bandwidth", "times AllReduce, AllGather and ReduceScatter over message sizes",
    "usage: collective_bandwidth --device cuda:R --world N --rank R --id-file FILE\n"
    "                            [--min-mib M] [--max-mib M] [--iters K] [--dtype DTYPE]\n"};

Options parse(int argc, char** argv) {
  Options o;
  o.device = "cuda:0";
  demo::parse(kCommandLine, argc, argv, o, [&](const std::string& flag, const std::string& value) {
    if (flag == "--world") o.world = std::stoi(value);
    else if (flag == "--rank") o.rank = std::stoi(value);
    else if (flag == "--id-file") o.id_file = value;
    else if (flag == "--min-mib") o.min_mib = std::stoll(value);
    else if (flag == "--max-mib") o.max_mib = std::stoll(value);
    else if (flag == "--iters") o.iters = std::stoi(value);
    else return false;
    return true;
  });
  if (o.world < 1 || o.world > 256) demo::usage(kCommandLine, "--world must be from 1 to 256");
  if (o.rank < 0 || o.rank >= o.world) demo::usage(kCommandLine, "--rank must be from 0 to --world - 1");
  if (o.min_mib < 1 || o.max_mib < o.min_mib || o.max_mib > 16384) {
    demo::usage(kCommandLine, "sizes must satisfy 1 <= --min-mib <= --max-mib <= 16384");
  }
  if (o.iters < 1 || o.iters > 10000) demo::usage(kCommandLine, "--iters must be from 1 to 10000");
  return o;
}

// Seconds per call of `call`, after two warm-up calls: `iters` calls queued, then one wait.
template <class F>
double seconds_per_call(const Device& device, int iters, F&& call) {
  call();
  call();
  return demo::timed(device, [&] {
           for (int i = 0; i < iters; ++i) call();
         }) /
         iters;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    demo::start(o);
    const Device device = Device::parse(o.device);
    const CommunicatorId id = demo::exchange_group_id(o.id_file, o.world, o.rank, device.type());
    const auto comm = Communicator::join(device, id, o.world, o.rank);
    const double n = o.world;
    const std::int64_t element = static_cast<std::int64_t>(dtype_size(o.dtype));
    AllReduceFwdOp all_reduce(comm->key(), "sum", true);
    AllGatherFwdOp all_gather(comm->key(), o.world);
    ReduceScatterFwdOp reduce_scatter(comm->key(), o.world);
    if (o.rank == 0) std::printf("collective,bytes,us,algbw_gbs,busbw_gbs\n");
    for (std::int64_t mib = o.min_mib; mib <= o.max_mib; mib *= 2) {
      const std::int64_t bytes = mib << 20;
      const std::int64_t rows = bytes / element / 1024 / o.world * o.world;  // [rows, 1024], rows divisible by n
      const std::int64_t message = rows * 1024 * element;
      const Tensor full = Tensor::zeros({rows, 1024}, o.dtype, device);
      const Tensor part = Tensor::zeros({rows / o.world, 1024}, o.dtype, device);
      const struct {
        const char* name;
        double seconds, factor;
      } rows_out[] = {
          {"all_reduce", seconds_per_call(device, o.iters, [&] { all_reduce(full); }), 2 * (n - 1) / n},
          {"all_gather", seconds_per_call(device, o.iters, [&] { all_gather(part); }), (n - 1) / n},
          {"reduce_scatter", seconds_per_call(device, o.iters, [&] { reduce_scatter(full); }), (n - 1) / n},
      };
      for (const auto& r : rows_out) {
        const double algbw = static_cast<double>(message) / r.seconds / 1e9;
        if (o.rank == 0) {
          std::printf("%s,%lld,%.2f,%.2f,%.2f\n", r.name, static_cast<long long>(message), r.seconds * 1e6, algbw,
                      algbw * r.factor);
        }
      }
      std::fflush(stdout);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "collective_bandwidth: %s: %s\n", std::string(error_kind(e)).c_str(), e.what());
    return 1;
  }
}
