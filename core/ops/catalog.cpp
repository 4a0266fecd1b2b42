#include "tileops/ops/catalog.hpp"

#include <algorithm>

#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/ops/swiglu_mlp.hpp"

namespace tileops {
namespace {

// Typed access to one parameter; `fallback` when the map lacks it.
template <class T>
T param(const ParamMap& params, std::string_view op, std::string_view name, T fallback) {
  const Value* v = params.find(name);
  if (v == nullptr) return fallback;
  if (const T* typed = std::get_if<T>(v)) return *typed;
  if constexpr (std::is_same_v<T, double>) {
    if (const auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
  }
  throw TypeError(std::string(op) + ": parameter '" + std::string(name) + "' got " + std::string(value_kind(*v)) +
                  " " + value_str(*v));
}

// An optional parameter: nullopt when absent or None.
template <class T>
std::optional<T> maybe(const ParamMap& params, std::string_view op, std::string_view name) {
  const Value* v = params.find(name);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::nullopt;
  return param<T>(params, op, name, T{});
}

std::optional<Device> device_param(const ParamMap& params, std::string_view op) {
  const Value* v = params.find("device");
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(v)) return Device::parse(*s);
  return param<Device>(params, op, "device", Device::cpu());
}

ReduceDims dims_param(const ParamMap& params, std::string_view op) {
  const Value* v = params.find("dim");
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(v)) return ReduceDims(*i);
  return ReduceDims(param<std::vector<std::int64_t>>(params, op, "dim", {}));
}

std::variant<std::int64_t, double> alpha_param(const ParamMap& params) {
  const Value* v = params.find("alpha");
  if (v != nullptr && std::holds_alternative<double>(*v)) return std::get<double>(*v);
  return param<std::int64_t>(params, "AddFwdOp", "alpha", 1);
}

std::vector<OpCatalogEntry> build_catalog() {
  using Params = const ParamMap&;
  using T = const Target&;
  std::vector<OpCatalogEntry> c = {
      {"AddFwdOp", &AddFwdOp::op_class, [](Params p, T t) { return std::make_unique<AddFwdOp>(alpha_param(p), t); }},
      {"AlibiFwdOp", &AlibiFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "AlibiFwdOp";
         return std::make_unique<AlibiFwdOp>(param<std::int64_t>(p, op, "seq_len", 0),
                                             param<std::int64_t>(p, op, "num_heads", 0),
                                             param<DType>(p, op, "out_dtype", DType::float32), device_param(p, op), t);
       }},
      {"BatchNormFwdOp", &BatchNormFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "BatchNormFwdOp";
         return std::make_unique<BatchNormFwdOp>(param<bool>(p, op, "training", false),
                                                 param<double>(p, op, "momentum", 0.1),
                                                 param<double>(p, op, "eps", 1e-5), t);
       }},
      {"GemmFwdOp", &GemmFwdOp::op_class,
       [](Params p, T t) {
         return std::make_unique<GemmFwdOp>(param<bool>(p, "GemmFwdOp", "trans_a", false),
                                            param<bool>(p, "GemmFwdOp", "trans_b", true), t);
       }},
      {"LayerNormFwdOp", &LayerNormFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "LayerNormFwdOp";
         return std::make_unique<LayerNormFwdOp>(param<std::vector<std::int64_t>>(p, op, "normalized_shape", {}),
                                                 param<double>(p, op, "eps", 1e-5), t);
       }},
      {"ProdFwdOp", &ProdFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "ProdFwdOp";
         return std::make_unique<ProdFwdOp>(dims_param(p, op), param<bool>(p, op, "keepdim", false),
                                            maybe<DType>(p, op, "dtype"), t);
       }},
      {"RMSNormFwdOp", &RMSNormFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "RMSNormFwdOp";
         return std::make_unique<RMSNormFwdOp>(param<std::vector<std::int64_t>>(p, op, "normalized_shape", {}),
                                               maybe<double>(p, op, "eps"), t);
       }},
      {"ReluFwdOp", &ReluFwdOp::op_class,
       [](Params p, T t) { return std::make_unique<ReluFwdOp>(param<bool>(p, "ReluFwdOp", "inplace", false), t); }},
      {"SiluAndMulFwdOp", &SiluAndMulFwdOp::op_class, [](Params, T t) { return std::make_unique<SiluAndMulFwdOp>(t); }},
      {"SoftmaxFwdOp", &SoftmaxFwdOp::op_class,
       [](Params p, T t) { return std::make_unique<SoftmaxFwdOp>(param<std::int64_t>(p, "SoftmaxFwdOp", "dim", -1), t); }},
      {"SumFwdOp", &SumFwdOp::op_class,
       [](Params p, T t) {
         const char* op = "SumFwdOp";
         return std::make_unique<SumFwdOp>(dims_param(p, op), param<bool>(p, op, "keepdim", false),
                                           maybe<DType>(p, op, "dtype"), t);
       }},
      {"SwiGLUMLPFwdOp", &SwiGLUMLPFwdOp::op_class, [](Params, T t) { return std::make_unique<SwiGLUMLPFwdOp>(t); }},
  };
  // Every maker first rejects names that are not manifest parameters of its op.
  for (OpCatalogEntry& e : c) {
    e.make = [name = e.name, cls = e.op_class, make = std::move(e.make)](Params p, T t) {
      const auto& known = cls().plan().param_names();
      for (const auto& [given, value] : p) {
        if (std::find(known.begin(), known.end(), given) == known.end()) {
          std::string list;
          for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
          throw TypeError(name + ": unknown parameter '" + given + "'; its parameters are: " +
                          (list.empty() ? "(none)" : list));
        }
      }
      return make(p, t);
    };
  }
  return c;
}

}  // namespace

std::span<const OpCatalogEntry> op_catalog() {
  static const std::vector<OpCatalogEntry> catalog = build_catalog();
  return catalog;
}

const OpCatalogEntry& find_op(std::string_view name) {
  for (const OpCatalogEntry& e : op_catalog()) {
    if (e.name == name) return e;
  }
  std::string known;
  for (const OpCatalogEntry& e : op_catalog()) known += (known.empty() ? "" : ", ") + e.name;
  throw ValueError("unknown op '" + std::string(name) + "'; known ops: " + known);
}

}  // namespace tileops
