#include "plugin_archs.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tileops/arch_name.hpp"

namespace tileops::cli {

nlohmann::json plugin_kernel_archs(const nlohmann::json& ops) {
  struct Served {
    std::set<int> archs;
    bool every_arch = false;
  };
  std::map<std::string, std::map<std::string, Served>> by_plugin;
  for (const auto& op : ops) {
    for (const auto& interface : op.at("interfaces")) {
      for (const auto& kernel : interface.at("kernels")) {
        if (kernel.at("plugin").is_null()) continue;
        const auto archs = kernel.at("supported_archs").get<std::vector<int>>();
        for (const auto& device : kernel.at("devices")) {
          Served& s = by_plugin[kernel.at("plugin").get<std::string>()][device.get<std::string>()];
          s.archs.insert(archs.begin(), archs.end());
          s.every_arch = s.every_arch || archs.empty();
        }
      }
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [plugin, devices] : by_plugin) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [device, served] : devices) {
      nlohmann::json names = nlohmann::json::array();
      for (int arch : served.archs) names.push_back(arch_name(device, arch));
      entries.push_back({{"device", device}, {"archs", names}, {"every_arch", served.every_arch}});
    }
    out[plugin] = entries;
  }
  return out;
}

std::string kernel_archs_text(const nlohmann::json& entries) {
  std::string text;
  for (const auto& e : entries) {
    if (e.at("archs").empty()) continue;
    std::string names;
    for (const auto& a : e.at("archs")) names += (names.empty() ? "" : ", ") + a.get<std::string>();
    const std::string device = e.at("device").get<std::string>();
    text += (text.empty() ? "" : "; ") +
            (e.at("every_arch").get<bool>() ? device + " kernels for every arch, some for " + names + " only"
                                            : device + " kernels built for " + names);
  }
  return text;
}

}  // namespace tileops::cli
