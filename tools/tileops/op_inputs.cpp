#include "op_inputs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/reports.hpp"

namespace tileops::cli {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::optional<std::int64_t> parse_int(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A finite decimal: inf and nan are refused (no parameter means them, and JSON cannot hold them).
std::optional<double> parse_float(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// "[2, 3]", "2x3", "[]" or "4".
std::optional<std::vector<std::int64_t>> parse_list(std::string text) {
  text = trim(text);
  std::vector<std::int64_t> out;
  char sep = 'x';
  if (!text.empty() && text.front() == '[') {
    if (text.back() != ']') return std::nullopt;
    text = text.substr(1, text.size() - 2);
    sep = ',';
  }
  if (trim(text).empty()) return out;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, sep)) {
    auto v = parse_int(trim(part));
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

const std::string* find_param_type(const OpSignature& plan, const std::string& name) {
  for (const auto& [param, type] : plan.params) {
    if (param == name) return &type;
  }
  return nullptr;
}

bool mentions(const std::string& type, const std::string& word) {
  std::size_t pos = 0;
  while ((pos = type.find(word, pos)) != std::string::npos) {
    const bool left = pos == 0 || !std::isalnum(static_cast<unsigned char>(type[pos - 1]));
    const bool right = pos + word.size() == type.size() || !std::isalnum(static_cast<unsigned char>(type[pos + word.size()]));
    if (left && right) return true;
    pos += word.size();
  }
  return false;
}

}  // namespace

OpSignature describe(const OpCatalogEntry& entry) {
  const nlohmann::json op = nlohmann::json::parse(reports::op(entry.name));
  OpSignature s;
  s.op_name = entry.name;
  for (const auto& p : op["params"]) {
    s.params.emplace_back(p["name"].get<std::string>(), p.contains("type") ? p["type"].get<std::string>() : "tensor");
  }
  for (const auto& in : op["inputs"]) s.input_names.push_back(in["name"].get<std::string>());
  for (const auto& out : op["outputs"]) s.output_names.push_back(out["name"].get<std::string>());
  return s;
}

Value parse_param(const OpSignature& plan, const std::string& name, const std::string& raw) {
  const std::string* declared = find_param_type(plan, name);
  if (declared == nullptr) {
    std::string known;
    for (const auto& p : plan.params) known += (known.empty() ? "" : ", ") + p.first;
    throw UsageError(plan.op_name + " has no parameter '" + name + "'; its parameters are: " +
                     (known.empty() ? "(none)" : known));
  }
  const std::string text = trim(raw);
  const std::string& type = *declared;
  auto fail = [&] {
    return UsageError("parameter '" + name + "' of type '" + type + "' cannot take the value '" + text + "'");
  };
  if (text == "none" || text == "None" || text == "null") {
    if (!mentions(type, "None")) throw fail();
    return Value();
  }
  if (mentions(type, "list")) {
    if (!text.empty() && text.front() == '[') {
      if (auto list = parse_list(text)) return *list;
      throw fail();
    }
  }
  if (mentions(type, "bool")) {
    if (text == "true" || text == "True" || text == "1") return true;
    if (text == "false" || text == "False" || text == "0") return false;
    throw fail();
  }
  if (mentions(type, "int")) {
    if (auto i = parse_int(text)) return *i;
  }
  if (mentions(type, "float")) {
    if (auto f = parse_float(text)) return *f;
  }
  DType dtype;
  if (try_parse_dtype(text, dtype)) return dtype;
  if (mentions(type, "device")) {
    try {
      return Device::parse(text);
    } catch (const Error&) {
      throw fail();
    }
  }
  if (mentions(type, "str")) return text;
  throw fail();
}

ParamMap parse_params(const OpSignature& plan, const std::vector<std::string>& assignments) {
  ParamMap params;
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw UsageError("--param '" + a + "' is not NAME=VALUE");
    const std::string name = trim(a.substr(0, eq));
    if (params.contains(name)) throw UsageError("--param " + name + " is given twice; give each parameter once");
    params.set(name, parse_param(plan, name, a.substr(eq + 1)));
  }
  return params;
}

std::vector<std::optional<TensorSpec>> parse_inputs(const OpSignature& plan,
                                                    const std::vector<std::string>& assignments) {
  std::vector<std::optional<TensorSpec>> specs(plan.input_names.size());
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw UsageError("--input '" + a + "' is not NAME=SHAPE[:DTYPE]");
    const std::string name = trim(a.substr(0, eq));
    const auto found = std::find(plan.input_names.begin(), plan.input_names.end(), name);
    const auto index = found - plan.input_names.begin();
    if (found == plan.input_names.end()) {
      std::string known;
      for (const auto& n : plan.input_names) known += (known.empty() ? "" : ", ") + n;
      throw UsageError(plan.op_name + " has no input '" + name + "'; its inputs are: " + known);
    }
    const std::string rest = a.substr(eq + 1);
    const auto colon = rest.rfind(':');
    const std::string shape_text = colon == std::string::npos ? rest : rest.substr(0, colon);
    TensorSpec spec;
    const auto shape = parse_list(shape_text);
    if (!shape) throw UsageError("--input " + name + ": '" + shape_text + "' is not a shape like [2,4096] or 2x4096");
    spec.shape.assign(shape->begin(), shape->end());
    if (colon != std::string::npos && !try_parse_dtype(trim(rest.substr(colon + 1)), spec.dtype)) {
      throw UsageError("--input " + name + ": unknown dtype '" + rest.substr(colon + 1) + "'");
    }
    if (!shape_fits(spec.shape, dtype_size(spec.dtype))) {
      try {
        throw_bad_shape(spec.shape, "--input " + name, dtype_size(spec.dtype));
      } catch (const ValueError& e) {
        throw UsageError(e.what());
      }
    }
    if (specs[static_cast<std::size_t>(index)]) {
      throw UsageError("--input " + name + " is given twice; give each input once");
    }
    specs[static_cast<std::size_t>(index)] = spec;
  }
  return specs;
}

std::vector<WorkloadCase> scaled_cases(const OpCatalogEntry& entry, std::optional<std::int64_t> cap,
                                       const std::string& command) {
  if (!cap) return workload_cases(entry.op_class());
  if (*cap <= 0) throw UsageError(command + ": --cap must be positive, got " + std::to_string(*cap));
  const std::int64_t limit = *cap;
  std::vector<WorkloadCase> cases = workload_cases(entry.op_class(), limit);
  for (WorkloadCase& c : cases) {
    if (const Value* v = c.params.find("seq_len")) c.params.set("seq_len", std::min(std::get<std::int64_t>(*v), limit));
  }
  return cases;
}

WorkloadCase find_case(const std::vector<WorkloadCase>& cases, const OpSignature& plan, const std::string& name) {
  for (const WorkloadCase& c : cases) {
    if (c.id == name) return c;
  }
  for (const WorkloadCase& c : cases) {
    if (c.label == name) return c;
  }
  std::string ids;
  for (const WorkloadCase& c : cases) ids += (ids.empty() ? "" : ", ") + c.id;
  throw UsageError(plan.op_name + " has no workload '" + name + "'; its cases are: " + ids);
}

double median_seconds(const std::function<void()>& fn, const Device& device, int warmup, int repeat) {
  DeviceRuntime& rt = device_runtime(device.type());
  for (int i = 0; i < warmup; ++i) fn();
  rt.synchronize(device.index());
  std::vector<double> times;
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    rt.synchronize(device.index());
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

Device device_option(const boost::program_options::variables_map& vm, const std::string& command) {
  try {
    return Device::parse(vm["device"].as<std::string>());
  } catch (const Error& e) {
    throw UsageError(command + ": --device: " + e.what());
  }
}

Target target_option(const boost::program_options::variables_map& vm) {
  return vm.count("target") ? Target(vm["target"].as<std::string>()) : Target();
}

}  // namespace tileops::cli
