// The offload targets the build compiled the rocm plugin's kernels for
// (TILEOPS_HIP_ARCHITECTURES, given to the tests comma-separated as TILEOPS_TEST_HIP_ARCHITECTURES).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tileops::test {

// The targets' processor names (gfx90a of gfx90a:xnack-), in the configured order.
inline std::vector<std::string> hip_target_processors() {
  std::vector<std::string> out;
  std::istringstream list(TILEOPS_TEST_HIP_ARCHITECTURES);
  for (std::string target; std::getline(list, target, ',');) out.push_back(target.substr(0, target.find(':')));
  return out;
}

// Their names as dispatch prints a kernel type's supported_archs: "[gfx90a, gfx1030]".
inline std::string hip_target_names_text() {
  std::string text;
  for (const auto& p : hip_target_processors()) text += (text.empty() ? "" : ", ") + p;
  return "[" + text + "]";
}

}  // namespace tileops::test
