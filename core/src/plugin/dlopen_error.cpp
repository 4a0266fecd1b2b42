#include "plugin/dlopen_error.hpp"

#include <boost/core/demangle.hpp>

namespace tileops::plugin {

std::string readable_dlopen_error(const std::string& why) {
  static const std::string kMarker = "undefined symbol: ";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = why.find(kMarker); at != std::string::npos; at = why.find(kMarker, from)) {
    const std::size_t begin = at + kMarker.size();
    std::size_t end = why.find_first_of(" \t\n,;)", begin);
    if (end == std::string::npos) end = why.size();
    const std::string symbol = why.substr(begin, end - begin);
    out += why.substr(from, begin - from);
    const std::string readable = symbol.starts_with("_Z") ? boost::core::demangle(symbol.c_str()) : symbol;
    out += readable == symbol ? symbol : readable + " (" + symbol + ")";
    from = end;
  }
  return out + why.substr(from);
}

}  // namespace tileops::plugin
