// How `run` and `bench` show which kernels served a call.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tileops::cli {

// "rms_norm=cpu_rms_norm" items joined by ", " (stage-qualified for sub-ops) of a
// json::kernels_json list.
std::string kernels_text(const nlohmann::json& kernels);

}  // namespace tileops::cli
