#include "backend_json.hpp"

#include "tileops/extend/backend.hpp"
#include "tileops/extend/plugin.hpp"

namespace tileops::cli {

nlohmann::json plugins_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : loaded_plugins()) {
    out.push_back({{"name", p.name}, {"version", p.version}, {"path", p.path.string()}, {"warnings", p.warnings}});
  }
  return out;
}

nlohmann::json load_failures_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : load_failures()) {
    out.push_back({{"path", f.path.string()},
                   {"plugin", f.plugin ? nlohmann::json(*f.plugin) : nlohmann::json(nullptr)},
                   {"reason", f.reason}});
  }
  return out;
}

nlohmann::json skipped_plugins_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : skipped_plugins()) out.push_back({{"name", s.name}, {"path", s.path.string()}, {"reason", s.reason}});
  return out;
}

nlohmann::json targets_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& name : registered_targets()) out.push_back({{"name", name}, {"ops", target_ops(name)}});
  return out;
}

}  // namespace tileops::cli
