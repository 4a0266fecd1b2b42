#include "nearest_names.hpp"

#include <algorithm>
#include <cctype>

namespace tileops {
namespace {

char fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& known, std::size_t limit) {
  const std::size_t within = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::size_t>> close;  // (distance, index in known)
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (known[i] == name) continue;
    const std::size_t d = edit_distance(name, known[i]);
    if (d <= within) close.emplace_back(d, i);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < close.size() && out.size() < limit; ++i) out.push_back(known[close[i].second]);
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& known) {
  const std::vector<std::string> near = nearest_names(name, known);
  if (near.empty()) return "";
  std::string s = " (did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i) {
    if (i > 0) s += i + 1 == near.size() ? " or " : ", ";
    s += "'" + near[i] + "'";
  }
  return s + "?)";
}

}  // namespace tileops
