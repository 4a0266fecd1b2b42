#include "json/op_json.hpp"

#include <type_traits>
#include <variant>

#include "signature/signature_plan.hpp"
#include "manifest/op_spec.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops::json {
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
// dtypes and devices as their names, tensors as {shape, dtype, device}.
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
        } else if constexpr (std::is_same_v<T, Tensor>) {
          return tensor_spec_json(TensorSpec::of(v));
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

}  // namespace

nlohmann::json op_json(const OpCatalogEntry& entry) {
  const OpClass& cls = entry.op_class();
  const OpSpec& spec = signature_plan(cls).spec();
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
    j["kw_only"] = p.kw_only;
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
    if (!out.may_alias.empty()) j["may_alias"] = out.may_alias;
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
  nlohmann::json boundaries = nlohmann::json::array();
  const SignaturePlan& plan = signature_plan(cls);
  for (const BoundaryOperator& b : plan.boundary_operators()) {
    nlohmann::json written = nlohmann::json::array();
    for (std::size_t i : b.written) written.push_back(plan.input_names()[i]);
    nlohmann::json null_outputs = nlohmann::json::array();
    for (std::size_t o : b.null_outputs) null_outputs.push_back(plan.output_names()[o]);
    boundaries.push_back({{"name", b.name}, {"written", written}, {"out", b.out}, {"null_outputs", null_outputs}});
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
          {"boundary_operators", boundaries},
          {"interfaces", interfaces},
          {"delegates", stages},
          {"workloads", workloads_json(cls, 0)},
          {"targets", registered_targets(cls.name())}};
}

nlohmann::json tensor_spec_json(const TensorSpec& spec) {
  return {{"shape", std::vector<std::int64_t>(spec.shape.begin(), spec.shape.end())},
          {"dtype", std::string(dtype_name(spec.dtype))},
          {"device", spec.device.str()}};
}

nlohmann::json workloads_json(const OpClass& cls, std::int64_t index_cap) {
  nlohmann::json cases = nlohmann::json::array();
  for (const WorkloadCase& c : workload_cases(cls, index_cap)) {
    nlohmann::json inputs = nlohmann::json::array();
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i]) {
        inputs.push_back(nullptr);
        continue;
      }
      nlohmann::json in = tensor_spec_json(*c.inputs[i]);
      in["name"] = signature_plan(cls).input_names()[i];
      if (i < c.ranges.size() && c.ranges[i]) in["range"] = {c.ranges[i]->low, c.ranges[i]->high};
      inputs.push_back(std::move(in));
    }
    cases.push_back({{"id", c.id}, {"label", c.label}, {"params", params_json(c.params)}, {"inputs", inputs}});
  }
  return cases;
}

nlohmann::json params_json(const ParamMap& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : params) out[name] = value_json(value);
  return out;
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
  nlohmann::json kernels = nlohmann::json::array();
  for (std::string_view k : record.kernels) kernels.push_back(std::string(k));
  return {{"op", std::string(record.op)},
          {"indices", indices},
          {"branch_key", record.branch_key},
          {"device", record.device ? nlohmann::json(record.device->str()) : nlohmann::json(nullptr)},
          {"tensors", tensors},
          {"traffic", traffic},
          {"written", written},
          {"has_out", record.has_out},
          {"kernels", kernels},
          {"stages", stages}};
}

}  // namespace tileops::json
