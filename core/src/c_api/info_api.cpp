// The version query, the process-wide facts as JSON, and the roofline picture.
#include <cstring>

#include "c_api/handles.hpp"
#include "tileops/errors.hpp"
#include "tileops/ops/catalog.hpp"
#include "tileops/reports.hpp"
#include "tileops/roofline.hpp"
#include "tileops/target.hpp"
#include "tileops/version.hpp"

using namespace tileops;
using namespace tileops::c_api;

extern "C" {

tileops_status* tileops_get_version(tileops_version_info* info) {
  return guarded([&] {
    require_pointer(info, "info");
    check_output_struct_size(info->struct_size, sizeof *info, "tileops_version_info");
    info->api_major = TILEOPS_C_API_VERSION_MAJOR;
    info->api_minor = TILEOPS_C_API_VERSION_MINOR;
    info->library = TILEOPS_VERSION_STRING;
  });
}

tileops_status* tileops_ops_json(const char* op_name, char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    *json = owned_string(op_name != nullptr ? reports::op(checked_string(op_name, "op_name")) : reports::ops());
  });
}

tileops_status* tileops_workloads_json(const char* op_name, int64_t index_cap, char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    *json = owned_string(reports::workloads(checked_string(op_name, "op_name"), index_cap));
  });
}

tileops_status* tileops_info_json(char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    *json = owned_string(reports::info());
  });
}

tileops_status* tileops_plugins_json(char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    *json = owned_string(reports::plugins());
  });
}

tileops_status* tileops_targets_json(char** json) {
  return guarded([&] {
    require_pointer(json, "json");
    *json = nullptr;
    *json = owned_string(reports::targets());
  });
}

tileops_status* tileops_roofline_svg(const char* bench_json, const char* device, char** svg) {
  return guarded([&] {
    require_pointer(svg, "svg");
    *svg = nullptr;
    require_pointer(bench_json, "bench_json");
    // Bounded so that a missing terminator is an error, not a read past the caller's buffer.
    constexpr std::size_t kMaxBenchJsonBytes = std::size_t{64} << 20;
    const std::string_view text(bench_json, strnlen(bench_json, kMaxBenchJsonBytes + 1));
    if (text.size() > kMaxBenchJsonBytes) {
      throw ValueError("bench_json is longer than 64 MiB, the largest bench document the C API takes");
    }
    *svg = owned_string(roofline_svg(text, device == nullptr ? std::string_view() : checked_string(device, "device")));
  });
}

}  // extern "C"
