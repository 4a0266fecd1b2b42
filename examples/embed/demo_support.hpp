// What the embedding demos share: random weights, the kernels an op ran, timing with the
// device's queued work, and the report of the plugins that loaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tileops/config.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/op.hpp"
#include "tileops/target.hpp"
#include "tileops/tensor.hpp"

namespace demo {

// The command line both demos take: --device, --target, --config and --dtype, and their own
// flags, each followed by its value.
struct CommonOptions {
  std::string device = "cpu";
  tileops::Target target;
  std::optional<std::string> config;
  tileops::DType dtype = tileops::DType::bfloat16;
};

// Describes a demo's command line: its name, what it does (the --help line) and its usage lines.
struct CommandLine {
  std::string program, summary, usage;
};

// Prints `problem` and the usage, then exits: on stdout with status 0 for --help, on stderr
// with status 2 for a bad command line.
[[noreturn]] void usage(const CommandLine& cl, const std::string& problem, bool help = false);

// Parses argv into `common`, handing each other flag and its value to `own`, which returns
// false for a flag it does not know and may throw std::logic_error (std::stoll's) or
// tileops::Error for a bad value; every failure ends in usage().
void parse(const CommandLine& cl, int argc, char** argv, CommonOptions& common,
           const std::function<bool(const std::string& flag, const std::string& value)>& own);

// Random values in [-scale, scale) on the host, then moved to the device: a weight of a few
// hundred million elements fills in a second.
tileops::Tensor random(std::vector<std::int64_t> shape, tileops::DType dtype, const tileops::Device& device, float scale,
                       std::uint64_t seed);

// The keys of the kernels op's calls were served by ("gate_up:cpu_dot_rows_gemm" for a stage's),
// or "target NAME" when a named target serves it.
std::string kernels_of(const tileops::Op& op, const std::string& prefix = "");

// Reads the config (--config, else the one found as usual), makes it the process's and loads the
// plugins; returns it. Throws what load_config throws.
tileops::Config start(const CommonOptions& common);

// Prints the config file, the default target, the plugins that loaded and the load failures.
void print_backends(const tileops::Config& cfg);

// Seconds `f` takes on `device`, its queued device work included.
template <class F>
double timed(const tileops::Device& device, F&& f) {
  tileops::DeviceRuntime& rt = tileops::device_runtime(device.type());
  rt.synchronize(device.index());
  const auto start = std::chrono::steady_clock::now();
  f();
  rt.synchronize(device.index());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace demo
