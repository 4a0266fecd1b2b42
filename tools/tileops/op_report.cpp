#include "op_report.hpp"

namespace tileops::cli {

std::string kernels_text(const nlohmann::json& kernels) {
  std::string s;
  for (const auto& k : kernels) {
    std::string item;
    if (!k["stage"].is_null()) item += k["stage"].get<std::string>() + ":";
    item += k["interface"].is_null() ? std::string("target") : k["interface"].get<std::string>();
    item += "=" + k["key"].get<std::string>();
    s += (s.empty() ? "" : ", ") + item;
  }
  return s.empty() ? "(none)" : s;
}

}  // namespace tileops::cli
