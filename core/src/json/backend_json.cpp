#include "json/backend_json.hpp"

#include <filesystem>

#include "tileops/config.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/collectives.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/paths.hpp"
#include "tileops/version.hpp"

namespace tileops::json {

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

nlohmann::json devices_json() {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& rt : device_runtimes()) {
    nlohmann::json list = nlohmann::json::array();
    const int count = rt->device_count();
    for (int i = 0; i < count; ++i) {
      const DeviceFacts f = rt->facts(i);
      list.push_back({{"index", i}, {"name", f.name}, {"arch", f.arch}, {"sm_count", f.sm_count}});
    }
    devices.push_back({{"type", std::string(rt->type().name())},
                       {"accelerator", rt->is_accelerator()},
                       {"count", count},
                       {"devices", list}});
  }
  return devices;
}

nlohmann::json collectives_json() {
  nlohmann::json providers = nlohmann::json::array();
  for (const auto& p : collective_providers()) {
    const std::optional<std::string> why = p->unavailable();
    providers.push_back({{"device_type", std::string(p->device_type().name())},
                         {"provider", p->name()},
                         {"available", !why.has_value()},
                         {"description", why ? *why : p->description()}});
  }
  return providers;
}

nlohmann::json info_json() {
  load_backends();
  const Config cfg = config();
  nlohmann::json searched = nlohmann::json::array();
  for (const auto& f : config_search_path()) {
    std::error_code ec;
    searched.push_back({{"path", f.string()}, {"exists", std::filesystem::exists(f, ec)}});
  }
  nlohmann::json plugin_path = nlohmann::json::array();
  for (const auto& p : plugin_search_path()) plugin_path.push_back(p.string());
  nlohmann::json info;
  info["version"] = kVersion;
  info["config_file"] = cfg.file ? nlohmann::json(cfg.file->string()) : nlohmann::json(nullptr);
  info["default_target"] = cfg.default_target ? nlohmann::json(*cfg.default_target) : nlohmann::json(nullptr);
  info["log_level"] = cfg.log_level;
  info["config_search_path"] = searched;
  info["plugin_path"] = plugin_path;
  nlohmann::json manifest_path = nlohmann::json::array();
  for (const auto& p : cfg.manifest_path) manifest_path.push_back(p.string());
  info["manifest_path"] = manifest_path;
  // Each list with where it came from (null when empty).
  const auto setting = [](const nlohmann::json& values, const std::string& origin) {
    return nlohmann::json{{"values", values}, {"from", origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(origin)}};
  };
  nlohmann::json preferred = nlohmann::json::object();
  for (const KernelPreference& p : cfg.prefer_kernels) preferred[p.op] = p.key;
  info["disable_plugins"] = setting(cfg.disable_plugins, cfg.disable_plugins_origin);
  info["disable_kernels"] = setting(cfg.disable_kernels, cfg.disable_kernels_origin);
  info["prefer_kernels"] = setting(preferred, cfg.prefer_kernels_origin);
  info["devices"] = devices_json();
  info["collectives"] = collectives_json();
  info["plugins"] = plugins_json();
  info["load_failures"] = load_failures_json();
  info["targets"] = targets_json();
  return info;
}

}  // namespace tileops::json
