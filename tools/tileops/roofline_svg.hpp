// The roofline picture of `tileops bench --svg`: each measured row a point at its arithmetic
// intensity (FLOP per byte) and achieved FLOP rate, on log-log axes, under the two ceilings of
// the device (memory bandwidth times intensity, and the peak FLOP rate).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tileops::cli {

// The SVG document of `rows` (bench's JSON rows; rows with an error, no FLOPs or no bytes are
// left out) under the ceilings `peak_gbps` and `peak_gflops` (both positive). Each point is
// labelled "<op> <case> (<kernels>)".
std::string roofline_svg(const nlohmann::json& rows, double peak_gbps, double peak_gflops, const std::string& device);

}  // namespace tileops::cli
