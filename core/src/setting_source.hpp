// How messages credit a configuration setting to where it came from.
#pragma once

#include <string>

namespace tileops {

// "environment variable TILEOPS_DISABLE_KERNELS" as it is; "disable_kernels in config file
// /etc/tileops/tileops.conf:3" for a file's line; "disable_kernels given to set_config"; and
// "the config's disable_kernels" when the origin is unknown (empty). `origin` is one of
// Config's *_origin fields.
inline std::string setting_source(const std::string& key, const std::string& origin) {
  if (origin.empty()) return "the config's " + key;
  if (origin.starts_with("environment variable ")) return origin;
  if (origin.starts_with("config file ")) return key + " in " + origin;
  return key + " given to " + origin;
}

}  // namespace tileops
