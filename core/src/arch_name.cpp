#include "tileops/arch_name.hpp"

#include <charconv>
#include <iterator>

namespace tileops {

std::string arch_name(std::string_view device_type, int arch) {
  if (device_type == "hip" && arch >= 0) {
    char digits[sizeof(int) * 2];
    const auto end = std::to_chars(std::begin(digits), std::end(digits), arch, 16).ptr;
    return "gfx" + std::string(std::begin(digits), end);
  }
  if (device_type == "cuda") return "sm_" + std::to_string(arch);
  return std::to_string(arch);
}

}  // namespace tileops
