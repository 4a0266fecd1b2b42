// `tileops run OP`: construct an op from --param values, run it once (plus timed repeats) on
// random inputs (--input or --workload), and report the serving target, the kernels, the call
// record and the roofline; --check compares against the reference kernels, run on host copies
// of the inputs whatever the device.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>

#include "command.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "op_inputs.hpp"
#include "op_report.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/reports.hpp"
#include "tileops/testing.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

int run_run(const std::vector<std::string>& args) {
  po::options_description options("run options");
  options.add_options()
      ("op", po::value<std::string>(), "the op to run (its manifest name, e.g. RMSNormFwdOp)")
      ("param,p", po::value<std::vector<std::string>>()->composing(), "NAME=VALUE construction parameter (repeatable)")
      ("input,i", po::value<std::vector<std::string>>()->composing(), "NAME=SHAPE[:DTYPE] random input, e.g. x=[4,64]:bfloat16; the dtype defaults to float32 (repeatable)")
      ("workload,w", po::value<std::string>(), "take parameters and inputs from a manifest workload (case id or label)")
      ("cap", po::value<std::int64_t>(), "with --workload: cap every index value of the row at this, as bench --cap does")
      ("device,d", po::value<std::string>()->default_value("cpu"), "device the inputs are made on")
      ("target,t", po::value<std::string>(), "target of the op: a target name, builtin or reference")
      ("repeat,r", po::value<int>()->default_value(5), "timed repeats (median reported)")
      ("check", "compare the outputs against the reference kernels (exit 1 on a mismatch)")
      ("json", "print one JSON object");
  add_common_options(options);
  po::positional_options_description positional;
  positional.add("op", 1);
  po::variables_map vm;
  if (!parse_args("run", "OP [--param N=V]... [--input N=SHAPE:DTYPE]... [--workload ID [--cap N]] [--check] [--json]", args,
                  options, vm, &positional)) {
    return 0;
  }
  if (!vm.count("op")) throw UsageError("tileops run: name the op to run, e.g. 'tileops run RMSNormFwdOp ...'");
  apply_common_options(vm);
  load_backends();

  const OpCatalogEntry* entry = nullptr;
  try {
    entry = &find_op(vm["op"].as<std::string>());
  } catch (const Error& e) {
    throw UsageError(std::string("tileops run: ") + e.what());
  }
  const OpSignature plan = describe(*entry);
  ParamMap params;
  std::vector<std::optional<TensorSpec>> specs(plan.input_names.size());
  std::vector<std::optional<ValueRange>> ranges;
  if (vm.count("cap") && !vm.count("workload")) throw UsageError("tileops run: --cap scales a --workload row; name one");
  if (vm.count("workload")) {
    const std::optional<std::int64_t> cap = vm.count("cap") ? std::optional(vm["cap"].as<std::int64_t>()) : std::nullopt;
    const WorkloadCase c = find_case(scaled_cases(*entry, cap, "tileops run"), plan, vm["workload"].as<std::string>());
    params = testing::random_construction_tensors(c.params);
    specs = c.inputs;
    ranges = c.ranges;
  }
  if (vm.count("param")) {
    for (const auto& [name, value] : parse_params(plan, vm["param"].as<std::vector<std::string>>())) params.set(name, value);
  }
  if (vm.count("input")) {
    const auto given = parse_inputs(plan, vm["input"].as<std::vector<std::string>>());
    for (std::size_t i = 0; i < given.size(); ++i) {
      if (given[i]) specs[i] = given[i];
    }
    ranges.clear();  // a range belongs to the row's shapes
  }
  const Device device = device_option(vm, "tileops run");
  const Target target = target_option(vm);
  if (!plan.has_call_time_tensor_input() && !params.contains("device")) params.set("device", device);
  const int repeat = vm["repeat"].as<int>();
  if (repeat < 1) throw UsageError("tileops run: --repeat must be at least 1, got " + std::to_string(repeat));

  std::unique_ptr<Op> op;
  try {
    op = entry->make(params, target);
  } catch (const Error& e) {
    // The parameters are the command line's: a construction that refuses them is a usage error.
    throw UsageError("tileops run: " + std::string(e.what()), std::string(error_kind(e)));
  }
  WorkloadCase drawn;
  drawn.inputs = specs;
  drawn.ranges = ranges;
  // On a terminal, stderr says which step runs and since when (a large row's check takes long).
  const bool progress = isatty(fileno(stderr)) != 0;
  const auto start = std::chrono::steady_clock::now();
  const auto step = [&](const char* what) {
    if (!progress) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\r[%.0f s] %s %s\033[K", elapsed, entry->name.c_str(), what);
  };
  step("drawing the inputs");
  const std::vector<Tensor> inputs = testing::random_inputs(drawn, device);
  const std::vector<Tensor> pristine = testing::clone_all(inputs);
  step("calling");
  const OpOutputs outputs = op->call(CallArgs(inputs));
  std::vector<Tensor> scratch = testing::clone_all(pristine);
  step("timing");
  const double seconds = median_seconds([&] { op->call(CallArgs(scratch)); }, device, 1, repeat);
  const Roofline roof = op->eval_roofline();

  nlohmann::json report;
  report["op"] = entry->name;
  report["device"] = device.str();
  report["target"] = target ? nlohmann::json(*target) : nlohmann::json(nullptr);
  report["serving_target"] = op->serving_target() ? nlohmann::json(*op->serving_target()) : nlohmann::json(nullptr);
  const nlohmann::json instance = nlohmann::json::parse(reports::op_instance(*op));
  report["kernels"] = instance["kernels"];
  report["caches"] = instance["caches"];
  report["last_call"] = nlohmann::json::parse(reports::last_call(*op));
  report["last_call"].erase("roofline");
  report["roofline"] = {{"flops", roof.flops}, {"bytes", roof.bytes}};
  report["seconds"] = seconds;
  report["gbps"] = seconds > 0 ? roof.bytes / seconds / 1e9 : 0.0;
  report["gflops"] = seconds > 0 ? roof.flops / seconds / 1e9 : 0.0;

  bool check_failed = false;
  if (vm.count("check")) {
    // The reference kernels run on the host, on copies of the inputs.
    step("running the reference kernels on the host");
    ParamMap oracle_params = params;
    if (oracle_params.contains("device")) oracle_params.set("device", Device::cpu());
    std::unique_ptr<Op> oracle = entry->make(oracle_params, std::string(REFERENCE));
    const std::vector<Tensor> oracle_inputs = testing::host_copies(pristine);
    const OpOutputs expected = oracle->call(CallArgs(oracle_inputs));
    nlohmann::json outs = nlohmann::json::array();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const testing::Comparison c = testing::compare(outputs[i], expected[i]);
      check_failed |= !c.ok;
      outs.push_back({{"output", plan.output_names[i]}, {"max_abs", c.max_abs}, {"max_rel", c.max_rel}, {"ok", c.ok}});
    }
    report["check"] = {{"ok", !check_failed}, {"outputs", outs}};
  }
  if (progress) std::fprintf(stderr, "\r\033[K");

  if (vm.count("json")) {
    std::cout << json_text(report) << "\n";
    return check_failed ? 1 : 0;
  }
  // An empty write (every written tensor empty) runs no implementation and selects no target.
  std::cout << entry->name << " on " << device.str() << "  serving target: "
            << op->serving_target().value_or("(none: no implementation ran)") << "\n";
  std::cout << "  kernels:  " << kernels_text(report["kernels"]) << "\n";
  const nlohmann::json& calls = report["caches"][0]["calls"];
  std::cout << "  cache:    " << calls["hits"].get<std::uint64_t>() << " hits, " << calls["misses"].get<std::uint64_t>()
            << " misses, " << calls["entries"].get<std::size_t>() << " of " << calls["capacity"].get<std::size_t>()
            << " entries\n";
  const SignatureCall& rec = *op->last_call();
  for (const TensorRecord& t : rec.tensors) {
    std::cout << "  tensor:   " << t.name << " " << dtype_name(t.dtype) << shape_str(t.shape) << "\n";
  }
  for (const IndexRecord& i : rec.indices) std::cout << "  index:    " << i.name << " = " << value_str(i.value) << "\n";
  std::cout << std::setprecision(4) << "  time:     " << seconds * 1e3 << " ms (median of " << repeat << ")\n";
  std::cout << "  roofline: " << roof.flops / 1e9 << " GFLOP, " << roof.bytes / 1e6 << " MB -> "
            << report["gbps"].get<double>() << " GB/s, " << report["gflops"].get<double>() << " GFLOP/s\n";
  if (vm.count("check")) {
    for (const auto& o : report["check"]["outputs"]) {
      std::cout << "  check:    " << o["output"].get<std::string>() << " max abs " << o["max_abs"].get<double>()
                << ", max rel " << o["max_rel"].get<double>() << "  " << (o["ok"].get<bool>() ? "PASS" : "FAIL")
                << "\n";
    }
  }
  return check_failed ? 1 : 0;
}

}  // namespace tileops::cli
