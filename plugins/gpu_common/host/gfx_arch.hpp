// The architecture number the hip runtime reports in DeviceFacts::arch. HIP's major.minor
// does not tell AMD GPUs apart (gfx908 and gfx90a both report 9.0), their gfx processor name
// does: its digits read as hexadecimal give one number per processor, ordered within a
// family (gfx908 -> 0x908, gfx90a -> 0x90a, gfx942 -> 0x942, gfx1100 -> 0x1100).
#pragma once

#include <cstddef>
#include <string_view>

namespace tileops::gpu {

// The number of a gfx name such as "gfx90a" or "gfx90a:sramecc+:xnack-" (target features after
// ':' are ignored); 0 for anything else: no "gfx" prefix, fewer than 3 or more than 4 digits,
// or a character that is not a hexadecimal digit.
constexpr int gfx_arch_number(std::string_view name) {
  if (!name.starts_with("gfx")) return 0;
  const std::size_t colon = name.find(':');
  const std::string_view processor = name.substr(3, colon == std::string_view::npos ? colon : colon - 3);
  if (processor.size() < 3 || processor.size() > 4) return 0;
  int number = 0;
  for (const char c : processor) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return 0;
    }
    number = number * 16 + digit;
  }
  return number;
}

}  // namespace tileops::gpu
