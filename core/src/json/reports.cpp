#include "tileops/reports.hpp"

#include <nlohmann/json.hpp>

#include "json/backend_json.hpp"
#include "json/op_json.hpp"
#include "json/op_report.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/target.hpp"

namespace tileops::reports {
namespace {

std::string text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string info() { return text(json::info_json()); }

std::string ops() {
  load_backends();
  nlohmann::json all = nlohmann::json::array();
  for (const OpCatalogEntry& e : op_catalog()) all.push_back(json::op_json(e));
  return text(all);
}

std::string op(std::string_view name) {
  load_backends();
  return text(json::op_json(find_op(name)));
}

std::string workloads(std::string_view name, std::int64_t index_cap) {
  const OpCatalogEntry& entry = find_op(name);
  if (index_cap < 0) {
    throw ValueError("index_cap " + std::to_string(index_cap) + " is negative; 0 keeps the rows as written");
  }
  return text(json::workloads_json(entry.op_class(), index_cap));
}

std::string plugins() {
  load_backends();
  return text({{"plugins", json::plugins_json()},
               {"load_failures", json::load_failures_json()},
               {"skipped", json::skipped_plugins_json()}});
}

std::string targets() {
  load_backends();
  return text(json::targets_json());
}

std::string op_instance(const Op& op) {
  const auto serving = op.serving_target();
  return text({{"name", op.name()},
               {"instance_key", op.instance_key()},
               {"target", op.target() ? nlohmann::json(*op.target()) : nlohmann::json(nullptr)},
               {"serving_target", serving ? nlohmann::json(*serving) : nlohmann::json(nullptr)},
               {"params", json::params_json(op.params())},
               {"kernels", json::kernels_json(op)},
               {"caches", json::caches_json(op)}});
}

std::string last_call(const Op& op) {
  nlohmann::json record = json::record_json(*op.last_call());
  const Roofline roofline = op.eval_roofline();
  record["roofline"] = {{"flops", roofline.flops}, {"bytes", roofline.bytes}};
  return text(record);
}

}  // namespace tileops::reports
