#include "ini_text.hpp"

#include <map>
#include <sstream>
#include <string_view>
#include <utility>

namespace tileops {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// At most 80 characters of `text` for a message, non-printable bytes as '?', and "..." when
// cut: a malformed line may be megabytes long or binary.
std::string excerpt(const std::string& text) {
  constexpr std::size_t kMax = 80;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (text.size() > kMax) out += "...";
  return out;
}

std::string unquote(std::string value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

IniText read_ini_text(const std::string& text) {
  IniText out;
  std::map<std::pair<std::string, std::string>, int> first_line;
  // A UTF-8 byte-order mark, which some editors write, is not part of the first line.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  std::istringstream in(text.starts_with(kByteOrderMark) ? text.substr(kByteOrderMark.size()) : text);
  std::string raw;
  std::string section;
  for (int line = 1; std::getline(in, raw); ++line) {
    const std::string content = trim(raw);
    if (content.empty() || content.front() == '#' || content.front() == ';') continue;
    if (content.front() == '[') {
      if (content.back() != ']') {
        out.problems.push_back({line, "", "malformed section header '" + excerpt(content) + "': expected '[name]'"});
        return out;
      }
      section = trim(content.substr(1, content.size() - 2));
      continue;
    }
    const std::string entry = trim(content.substr(0, content.find('#')));
    const auto eq = entry.find('=');
    const std::string key = eq == std::string::npos ? "" : trim(entry.substr(0, eq));
    if (key.empty()) {
      out.problems.push_back({line, "", "malformed line '" + excerpt(content) + "': expected 'key = value'"});
      return out;
    }
    const auto [it, fresh] = first_line.try_emplace({section, key}, line);
    if (!fresh) {
      out.problems.push_back({line, key, "given more than once (first on line " + std::to_string(it->second) +
                                             "); each key may appear once"});
      return out;
    }
    out.entries.push_back({section, key, unquote(trim(entry.substr(eq + 1))), line});
  }
  return out;
}

}  // namespace tileops
