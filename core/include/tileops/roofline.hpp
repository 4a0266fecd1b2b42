// The roofline picture of benchmark results: each measured row a point at its arithmetic
// intensity (FLOP per byte) and achieved FLOP rate, on log-log axes, under the device's memory
// bandwidth ceiling and, when the peak FLOP rate is known, its compute ceiling.
#pragma once

#include <string>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// The SVG document of `bench_json`, the object `tileops bench --json` prints:
// {"peak_gbps": number > 0, "peak_gflops": number > 0 or null (no compute ceiling), "rows": [row]},
// each row {"op", "case", "gbps", "gflops", "kernels"?: [{"key"}]} (other fields are ignored).
// A row with an "error", or without a positive "gbps" and "gflops", is left out. Each point is
// labelled "<op> <case> (<kernel keys>)"; `device` names the device in the title and legend.
// Throws ValueError, naming the field, when the text is not JSON of that shape or a peak is not
// a positive finite number.
TILEOPS_API std::string roofline_svg(std::string_view bench_json, std::string_view device);

}  // namespace tileops
