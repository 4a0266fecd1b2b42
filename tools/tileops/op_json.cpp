#include "op_json.hpp"

#include <type_traits>
#include <variant>

#include "signature/signature_plan.hpp"
#include "manifest/op_spec.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops::cli {
namespace {

nlohmann::json kernel_json(const std::string& key, const std::string& plugin, const KernelType& t) {
  return {{"key", key},
          {"plugin", plugin.empty() ? nlohmann::json(nullptr) : nlohmann::json(plugin)},
          {"class", t.class_name},
          {"devices", t.devices},
          {"supported_archs", t.supported_archs},
          {"general", t.general},
          {"preferred_over", t.preferred_over}};
}

// A value as the JSON type it is: None as null, numbers as numbers, lists and shapes as arrays;
// dtypes, devices and tensors as their names.
template <typename Variant>
nlohmann::json value_json(const Variant& value) {
  return std::visit(
      [&value](const auto& v) -> nlohmann::json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> || std::is_same_v<T, double> ||
                             std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, Shape> || std::is_same_v<T, std::vector<std::int64_t>>) {
          return std::vector<std::int64_t>(v.begin(), v.end());
        } else {
          return value_str(value);
        }
      },
      value);
}

// A declaration that is true, false or an expression: a bool, or the expression's text.
nlohmann::json flag_json(bool set, const std::string& expr) {
  return expr.empty() ? nlohmann::json(set) : nlohmann::json(expr);
}

// The op's workload cases at their manifest sizes: id, label, the parameters the row gives, and
// each input passed with its shape, dtype and (for an index input) the range of its values.
nlohmann::json workloads_json(const SignaturePlan& plan) {
  nlohmann::json rows = nlohmann::json::array();
  for (const WorkloadCase& c : plan.workload_cases()) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : c.params) params[name] = value_json(value);
    nlohmann::json inputs = nlohmann::json::array();
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i]) continue;
      nlohmann::json in = {{"name", plan.input_names()[i]},
                           {"shape", std::vector<std::int64_t>(c.inputs[i]->shape.begin(), c.inputs[i]->shape.end())},
                           {"dtype", std::string(dtype_name(c.inputs[i]->dtype))}};
      if (i < c.ranges.size() && c.ranges[i]) in["range"] = {c.ranges[i]->low, c.ranges[i]->high};
      inputs.push_back(std::move(in));
    }
    rows.push_back({{"id", c.id}, {"label", c.label}, {"params", params}, {"inputs", inputs}});
  }
  return rows;
}

}  // namespace

nlohmann::json op_json(const OpCatalogEntry& entry) {
  const OpClass& cls = entry.op_class();
  const OpSpec& spec = cls.plan().spec();
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : spec.params) {
    nlohmann::json j = {{"name", p.name}};
    if (p.is_tensor) {
      j["dtype"] = p.dtype;
      j["shape"] = p.shape;
    } else {
      j["type"] = p.type;
    }
    j["required"] = !p.default_value.has_value();
    j["default"] = p.default_value ? value_json(*p.default_value) : nlohmann::json(nullptr);
    params.push_back(j);
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& in : spec.inputs) {
    nlohmann::json j = {{"name", in.name}, {"dtype", in.dtype}, {"shape", in.shape}};
    if (in.optional || !in.optional_expr.empty()) j["optional"] = flag_json(in.optional, in.optional_expr);
    if (in.mutated || !in.mutated_expr.empty()) j["mutated"] = flag_json(in.mutated, in.mutated_expr);
    inputs.push_back(j);
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& out : spec.outputs) {
    nlohmann::json j = {{"name", out.name}, {"dtype", out.dtype}, {"shape", out.shape}};
    if (!out.nullable.empty()) j["nullable"] = out.nullable;
    if (out.buffer_out) j["buffer"] = "out";
    if (!out.alias.empty()) j["alias"] = out.alias;
    outputs.push_back(j);
  }
  nlohmann::json interfaces = nlohmann::json::array();
  for (const InterfaceDecl& decl : cls.interfaces()) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& [key, type] : cls.kernel_types()) {
      if (type->interface == decl.type) kernels.push_back(kernel_json(key, "", *type));
    }
    for (const RegisteredKernelType& reg : registered_kernel_types(cls.name())) {
      if (reg.type->interface == decl.type) kernels.push_back(kernel_json(reg.key, reg.owner, *reg.type));
    }
    interfaces.push_back({{"name", decl.name}, {"type", decl.type_name}, {"kernels", kernels}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const DelegateDecl& d : cls.delegate_types()) stages.push_back({{"stage", d.stage}, {"op", d.op}});
  return {{"name", cls.name()},
          {"family", spec.family},
          {"status", spec.status},
          {"params", params},
          {"inputs", inputs},
          {"outputs", outputs},
          {"compile_op_names", cls.compile_op_names()},
          {"interfaces", interfaces},
          {"delegates", stages},
          {"workloads", workloads_json(cls.plan())},
          {"targets", registered_targets(cls.name())}};
}

nlohmann::json record_json(const SignatureCall& record) {
  nlohmann::json indices = nlohmann::json::object();
  for (const IndexRecord& i : record.indices) indices[std::string(i.name)] = value_json(i.value);
  nlohmann::json tensors = nlohmann::json::object();
  for (const TensorRecord& t : record.tensors) {
    tensors[std::string(t.name)] = {{"shape", std::vector<std::int64_t>(t.shape.begin(), t.shape.end())},
                                    {"dtype", std::string(dtype_name(t.dtype))}};
  }
  nlohmann::json traffic = nlohmann::json::object();
  for (const TensorTraffic& t : record.traffic) {
    traffic[std::string(t.name)] = {{"reads", t.reads}, {"writes", t.writes}, {"bytes", t.bytes}};
  }
  nlohmann::json written = nlohmann::json::array();
  for (std::string_view w : record.written) written.push_back(std::string(w));
  nlohmann::json stages = nlohmann::json::array();
  for (const StageRecord& s : record.stages) {
    nlohmann::json calls = nlohmann::json::array();
    for (const auto& c : s.calls) calls.push_back(record_json(*c));
    stages.push_back({{"stage", std::string(s.stage)}, {"calls", calls}});
  }
  return {{"op", std::string(record.op)},
          {"indices", indices},
          {"branch_key", record.branch_key},
          {"device", record.device ? nlohmann::json(record.device->str()) : nlohmann::json(nullptr)},
          {"tensors", tensors},
          {"traffic", traffic},
          {"written", written},
          {"has_out", record.has_out},
          {"stages", stages}};
}

}  // namespace tileops::cli
