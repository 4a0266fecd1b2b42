// `tileops bench [OP...]`: runs the manifest workload rows of the ops (all by default) on the
// chosen device and target and prints time, achieved bandwidth and FLOP rate, and the
// fraction of the roofline: the time the roofline allows (bytes at the peak bandwidth, FLOPs
// at the peak FLOP rate, whichever is longer) over the time measured.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <csignal>
#include <fstream>
#include <iostream>
#include <optional>
#include <limits>
#include <sstream>
#include <thread>

#include "command.hpp"
#include "csv_file.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "op_inputs.hpp"
#include "op_report.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/reports.hpp"
#include "tileops/roofline.hpp"
#include "tileops/testing.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

namespace {

struct Peaks {
  double bytes_per_second;
  double flops_per_second;
};

// The peaks of `device`, measured now unless flags give them. On the host: the memory
// bandwidth (median of three 256 MiB copies, one slice per hardware thread, as the CPU kernels
// run) and the FLOP rate of a float32 1024^3 GEMM through GemmFwdOp. On a device the host
// cannot address (an accelerator): a 256 MiB device-to-device copy and a bfloat16 4096^3
// GEMM. A device without a GEMM kernel gets no FLOP peak (the roofline is then bytes only).
Peaks measure_peaks(const po::variables_map& vm, const Device& device) {
  Peaks p{0, 0};
  DeviceRuntime& rt = device_runtime(device.type());
  const bool on_host = rt.host_accessible();
  if (vm.count("peak-gbps")) {
    p.bytes_per_second = vm["peak-gbps"].as<double>() * 1e9;
  } else if (on_host) {
    const std::size_t n = std::size_t{256} << 20;
    std::vector<char> a(n, 1), b(n, 2);
    const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t slice = (n + threads - 1) / threads;
    const auto copy = [&] {
      std::vector<std::jthread> workers;
      for (std::size_t t = 0; t < threads; ++t) {
        const std::size_t begin = std::min(n, t * slice);
        const std::size_t size = std::min(n, begin + slice) - begin;
        workers.emplace_back([&a, &b, begin, size] { std::memcpy(a.data() + begin, b.data() + begin, size); });
      }
    };
    const double s = median_seconds(copy, Device::cpu(), 1, 3);
    p.bytes_per_second = 2.0 * static_cast<double>(n) / s;
  } else {
    const std::int64_t n = std::int64_t{256} << 20;
    const Tensor a = Tensor::zeros({n}, DType::uint8, device), b = Tensor::empty({n}, DType::uint8, device);
    const double s = median_seconds([&] { rt.copy_on_device(b.data_ptr(), a.data_ptr(), n, device.index()); }, device, 1, 3);
    p.bytes_per_second = 2.0 * static_cast<double>(n) / s;
  }
  if (vm.count("peak-gflops")) {
    p.flops_per_second = vm["peak-gflops"].as<double>() * 1e9;
    return p;
  }
  const std::int64_t size = on_host ? 1024 : 4096;
  const DType dtype = on_host ? DType::float32 : DType::bfloat16;
  try {
    GemmFwdOp gemm(false, false);
    const auto in = testing::random_tensors(
        {TensorSpec{device, dtype, Shape{size, size}}, TensorSpec{device, dtype, Shape{size, size}}}, device);
    const double s = median_seconds([&] { gemm(in[0], in[1]); }, device, 1, 3);
    p.flops_per_second = 2.0 * static_cast<double>(size * size) * static_cast<double>(size) / s;
  } catch (const Error& e) {
    std::fprintf(stderr, "tileops bench: no FLOP peak on %s (%s); the roofline counts bytes only\n",
                 device.str().c_str(), e.what());
    p.flops_per_second = std::numeric_limits<double>::infinity();
  }
  return p;
}

void print_table_head(const Peaks& peaks, const Device& device) {
  const bool on_host = device_runtime(device.type()).host_accessible();
  std::printf("peaks: %.1f GB/s (%s), %.1f GFLOP/s (%s)\n\n", peaks.bytes_per_second / 1e9,
              on_host ? "memcpy on every hardware thread" : "device-to-device copy", peaks.flops_per_second / 1e9,
              on_host ? "float32 GEMM 1024^3" : "bfloat16 GEMM 4096^3");
  std::printf("%-16s %-34s %10s %9s %9s %8s  %s  %s\n", "op", "case", "ms", "GB/s", "GFLOP/s", "roofline", "kernels",
              "inputs");
  std::fflush(stdout);
}

// A case's inputs by name, each {"shape": [...], "dtype": "..."}; inputs it does not pass are
// left out.
nlohmann::json inputs_json(const OpSignature& plan, const WorkloadCase& c) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < c.inputs.size() && i < plan.input_names.size(); ++i) {
    if (!c.inputs[i]) continue;
    out[plan.input_names[i]] = {{"shape", c.inputs[i]->shape}, {"dtype", dtype_name(c.inputs[i]->dtype)}};
  }
  return out;
}

// "x=[4,4096]:bfloat16 weight=[4096]:bfloat16".
std::string inputs_text(const nlohmann::json& inputs) {
  std::string s;
  for (const auto& [name, spec] : inputs.items()) {
    std::string shape;
    for (const auto& d : spec["shape"]) shape += (shape.empty() ? "" : ",") + std::to_string(d.get<std::int64_t>());
    s += (s.empty() ? "" : " ") + name + "=[" + shape + "]:" + spec["dtype"].get<std::string>();
  }
  return s;
}

// One row of the table, printed (and flushed) as soon as it is measured.
void print_table_row(const nlohmann::json& row) {
  if (row.contains("error")) {
    std::printf("%-16s %-34s error: %s\n", row["op"].get<std::string>().c_str(), row["case"].get<std::string>().c_str(),
                row["error"].get<std::string>().c_str());
  } else {
    std::printf("%-16s %-34s %10.3f %9.2f %9.2f %7.0f%%  %s  %s\n", row["op"].get<std::string>().c_str(),
                row["case"].get<std::string>().c_str(), row["ms"].get<double>(), row["gbps"].get<double>(),
                row["gflops"].get<double>(), 100 * row["roofline_fraction"].get<double>(),
                kernels_text(row["kernels"]).c_str(), inputs_text(row["inputs"]).c_str());
  }
  std::fflush(stdout);
}

std::vector<std::string> csv_fields(const nlohmann::json& row) {
  const auto num = [&](const char* k) { return row.contains(k) ? std::to_string(row[k].get<double>()) : std::string(); };
  const auto str = [&](const char* k) {
    return row.contains(k) && row[k].is_string() ? row[k].get<std::string>() : std::string();
  };
  return {str("op"),  str("case"), num("ms"), num("gbps"), num("gflops"), num("roofline_fraction"), str("serving_target"),
          row.contains("kernels") ? kernels_text(row["kernels"]) : std::string(), str("error")};
}

// While alive, SIGINT (Ctrl-C) asks the rows to stop instead of killing the process: the row
// being measured completes, and the rows done are printed and written.
class InterruptScope {
 public:
  // A SIGINT the process was started ignoring (a background job) stays ignored.
  InterruptScope() : previous_(std::signal(SIGINT, &InterruptScope::on_signal)) {
    flag() = 0;
    if (previous_ == SIG_IGN) std::signal(SIGINT, SIG_IGN);
  }
  ~InterruptScope() { std::signal(SIGINT, previous_); }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  bool requested() const { return flag() != 0; }

 private:
  static volatile std::sig_atomic_t& flag() {
    static volatile std::sig_atomic_t f = 0;
    return f;
  }
  static void on_signal(int) { flag() = 1; }
  void (*previous_)(int);
};

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  po::options_description options("bench options");
  options.add_options()
      ("op", po::value<std::vector<std::string>>(), "ops to benchmark (default: all)")
      ("device,d", po::value<std::string>()->default_value("cpu"), "device the inputs are made on")
      ("target,t", po::value<std::string>(), "target of the ops: a target name, builtin or reference")
      ("repeat,r", po::value<int>()->default_value(5), "timed repeats per case (median reported)")
      ("warmup", po::value<int>()->default_value(1), "untimed calls before the timed ones")
      ("cap", po::value<std::int64_t>(), "cap every index value of the rows at this (smaller runs)")
      ("peak-gbps", po::value<double>(), "peak memory bandwidth for the roofline (default: measured)")
      ("peak-gflops", po::value<double>(), "peak FLOP rate for the roofline (default: measured)")
      ("csv", po::value<std::string>(), "also write the table to this CSV file")
      ("svg", po::value<std::string>(), "also draw the rows as a roofline picture into this SVG file")
      ("json", "print a JSON array instead of the table");
  add_common_options(options);
  po::positional_options_description positional;
  positional.add("op", -1);
  po::variables_map vm;
  if (!parse_args("bench", "[OP...] [--device D] [--target T] [--cap N] [--csv FILE] [--svg FILE] [--json]", args, options, vm,
                  &positional)) {
    return 0;
  }
  apply_common_options(vm);
  load_backends();
  const Device device = device_option(vm, "tileops bench");
  const Target target = target_option(vm);
  std::vector<const OpCatalogEntry*> ops;
  if (vm.count("op")) {
    for (const auto& name : vm["op"].as<std::vector<std::string>>()) {
      try {
        ops.push_back(&find_op(name));
      } catch (const Error& e) {
        throw UsageError(std::string("tileops bench: ") + e.what());
      }
    }
  } else {
    for (const OpCatalogEntry& e : op_catalog()) ops.push_back(&e);
  }
  // A peak must be a positive finite rate: the roofline divides by it.
  for (const char* peak : {"peak-gbps", "peak-gflops"}) {
    if (!vm.count(peak)) continue;
    const double v = vm[peak].as<double>();
    if (!(std::isfinite(v) && v > 0)) {
      std::ostringstream seen;
      seen << v;
      throw UsageError(std::string("tileops bench: --") + peak + " must be a positive finite number, got " + seen.str());
    }
  }
  if (vm["repeat"].as<int>() < 1) throw UsageError("tileops bench: --repeat must be at least 1");
  if (vm["warmup"].as<int>() < 0) throw UsageError("tileops bench: --warmup must be at least 0");
  // Opened, and its header written, before the rows run, so that an unwritable path fails at once.
  std::optional<CsvFile> csv;
  if (vm.count("csv")) {
    csv.emplace(vm["csv"].as<std::string>(), "tileops bench");
    csv->write_row({"op", "case", "ms", "gbps", "gflops", "roofline_fraction", "serving_target", "kernels", "error"});
  }
  // Opened before the rows run too, so that an unwritable path fails at once.
  std::optional<std::ofstream> svg;
  if (vm.count("svg")) {
    svg.emplace(vm["svg"].as<std::string>(), std::ios::trunc);
    if (!*svg) throw UsageError("tileops bench: --svg " + vm["svg"].as<std::string>() + ": cannot be opened for writing");
  }
  const std::optional<std::int64_t> cap = vm.count("cap") ? std::optional(vm["cap"].as<std::int64_t>()) : std::nullopt;
  if (cap && *cap <= 0) throw UsageError("tileops bench: --cap must be positive");

  const Peaks peaks = measure_peaks(vm, device);
  struct Case {
    const OpCatalogEntry* entry;
    WorkloadCase c;
  };
  std::vector<Case> cases;
  for (const OpCatalogEntry* e : ops) {
    for (WorkloadCase& c : scaled_cases(*e, cap, "tileops bench")) cases.push_back({e, std::move(c)});
  }

  const bool json = vm.count("json") != 0;
  // On a terminal only: nothing extra when stderr is piped or redirected.
  const bool progress = isatty(fileno(stderr)) != 0;
  const auto start = std::chrono::steady_clock::now();
  if (!json) print_table_head(peaks, device);
  const InterruptScope interrupt;
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < cases.size() && !interrupt.requested(); ++i) {
    const auto& [entry, c] = cases[i];
    if (progress) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\r[%zu/%zu, %.0f s] %s %s\033[K", i + 1, cases.size(), elapsed, entry->name.c_str(),
                   c.id.c_str());
    }
    const OpSignature signature = describe(*entry);
    ParamMap params = testing::random_construction_tensors(c.params);
    if (!signature.has_call_time_tensor_input() && !params.contains("device")) params.set("device", device);
    nlohmann::json row = {{"op", entry->name}, {"case", c.id}, {"inputs", inputs_json(signature, c)}};
    try {
      std::unique_ptr<Op> op = entry->make(params, target);
      const std::vector<Tensor> inputs = testing::random_inputs(c, device);
      const double s = median_seconds([&] { op->call(CallArgs(inputs)); }, device, vm["warmup"].as<int>(),
                                      vm["repeat"].as<int>());
      const Roofline r = op->eval_roofline();
      const double roof = std::max(r.bytes / peaks.bytes_per_second, r.flops / peaks.flops_per_second);
      const auto serving = op->serving_target();
      row.update({{"ms", s * 1e3},
                  {"gbps", r.bytes / s / 1e9},
                  {"gflops", r.flops / s / 1e9},
                  {"roofline_fraction", roof / s},
                  {"serving_target", serving ? nlohmann::json(*serving) : nlohmann::json(nullptr)},
                  {"kernels", nlohmann::json::parse(reports::op_instance(*op))["kernels"]}});
    } catch (const std::exception& e) {
      row["error"] = e.what();
    }
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (!json) print_table_row(row);
    if (csv) csv->write_row(csv_fields(row));
    rows.push_back(std::move(row));
  }

  // An infinite FLOP peak (none measured) prints as null.
  const nlohmann::json result = {{"peak_gbps", peaks.bytes_per_second / 1e9},
                                 {"peak_gflops", peaks.flops_per_second / 1e9},
                                 {"rows", rows}};
  if (json) std::cout << json_text(result) << "\n";
  if (csv) csv->close();
  if (svg) {
    *svg << roofline_svg(json_text(result), device.str());
    if (!svg->flush()) throw UsageError("tileops bench: --svg " + vm["svg"].as<std::string>() + ": cannot be written");
  }
  if (interrupt.requested()) {
    std::cerr << "tileops bench: interrupted; " << rows.size() << " of " << cases.size() << " row(s) done\n";
    return 130;
  }
  for (const auto& row : rows) {
    if (row.contains("error")) return 1;
  }
  return 0;
}

}  // namespace tileops::cli
