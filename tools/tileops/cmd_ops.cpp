// `tileops ops [--json] [OP...]`: each op with its family, parameters, inputs and outputs,
// boundary operators, kernel interfaces and the kernel types registered for each.
#include <iostream>

#include "command.hpp"
#include "common_options.hpp"
#include "json_text.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/reports.hpp"

namespace tileops::cli {
namespace po = boost::program_options;

namespace {

std::string join(const nlohmann::json& list) {
  std::string s;
  for (const auto& item : list) s += (s.empty() ? "" : ", ") + item.get<std::string>();
  return s.empty() ? "-" : s;
}

// A JSON value as the text listing shows it: strings quoted as in the manifest, None for null.
std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "None";
  return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
}

void print_text(const nlohmann::json& op) {
  std::cout << op["name"].get<std::string>() << "  (family " << op["family"].get<std::string>() << ")\n";
  for (const auto& p : op["params"]) {
    std::cout << "  param  " << p["name"].get<std::string>() << ": "
              << (p.contains("type") ? p["type"].get<std::string>() : "tensor " + p["dtype"].get<std::string>())
              << (p["required"].get<bool>() ? "" : " = " + value_text(p["default"])) << "\n";
  }
  for (const auto& in : op["inputs"]) {
    std::cout << "  input  " << in["name"].get<std::string>() << ": " << in["dtype"].get<std::string>() << " "
              << in["shape"].get<std::string>() << (in.contains("optional") ? "  (optional)" : "")
              << (in.contains("mutated") ? "  (mutated: " + (in["mutated"].is_string() ? in["mutated"].get<std::string>() : "true") + ")" : "")
              << "\n";
  }
  for (const auto& out : op["outputs"]) {
    std::cout << "  output " << out["name"].get<std::string>() << ": " << out["dtype"].get<std::string>() << " "
              << out["shape"].get<std::string>() << "\n";
  }
  for (const auto& d : op["delegates"]) {
    std::cout << "  stage  " << d["stage"].get<std::string>() << ": " << d["op"].get<std::string>() << "\n";
  }
  std::cout << "  boundary operators: " << join(op["compile_op_names"]) << "\n";
  for (const auto& i : op["interfaces"]) {
    std::cout << "  interface " << i["name"].get<std::string>() << " (" << i["type"].get<std::string>() << ")\n";
    for (const auto& k : i["kernels"]) {
      std::cout << "    " << k["key"].get<std::string>() << "  ["
                << (k["plugin"].is_null() ? "in-tree" : "plugin " + k["plugin"].get<std::string>()) << "; "
                << join(k["devices"]) << (k["general"].get<bool>() ? "; general" : "")
                << (k["preferred_over"].empty() ? "" : "; preferred over " + join(k["preferred_over"])) << "]\n";
    }
  }
  std::cout << "  targets: " << join(op["targets"]) << "\n\n";
}

}  // namespace

int run_ops(const std::vector<std::string>& args) {
  po::options_description options("ops options");
  options.add_options()("json", "print a JSON array instead of text")(
      "op", po::value<std::vector<std::string>>(), "ops to describe (default: all)");
  add_common_options(options);
  po::positional_options_description positional;
  positional.add("op", -1);
  po::variables_map vm;
  if (!parse_args("ops", "[--json] [OP...]", args, options, vm, &positional)) return 0;
  apply_common_options(vm);
  load_backends();

  nlohmann::json all = nlohmann::json::array();
  if (vm.count("op")) {
    for (const auto& name : vm["op"].as<std::vector<std::string>>()) {
      const OpCatalogEntry* entry = nullptr;
      try {
        entry = &find_op(name);
      } catch (const Error& e) {
        throw UsageError(std::string("tileops ops: ") + e.what());
      }
      all.push_back(nlohmann::json::parse(reports::op(entry->name)));
    }
  } else {
    all = nlohmann::json::parse(reports::ops());
  }
  if (vm.count("json")) {
    std::cout << json_text(all) << "\n";
  } else {
    for (const auto& op : all) print_text(op);
  }
  return 0;
}

}  // namespace tileops::cli
