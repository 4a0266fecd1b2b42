#include "tileops/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "tileops/errors.hpp"

namespace tileops {
namespace {

constexpr double kWidth = 900, kHeight = 600, kLeft = 80, kRight = 30, kTop = 40, kBottom = 60;

std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A log-scale axis over whole decades [lo, hi] mapped to [from, to] pixels.
struct LogAxis {
  double lo, hi, from, to;
  double at(double v) const { return from + (std::log10(v) - lo) / (hi - lo) * (to - from); }
};

struct Point {
  double intensity, gflops;
  std::string label;
};

[[noreturn]] void malformed(const std::string& what) {
  throw ValueError("roofline: the bench results must be " + what);
}

const nlohmann::json& field(const nlohmann::json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) malformed("an object with \"" + std::string(name) + "\" at " + where + ", which has none");
  return *it;
}

std::string text_field(const nlohmann::json& object, const char* name, const std::string& where) {
  const nlohmann::json& v = field(object, name, where);
  if (!v.is_string()) malformed("a string at " + where + "." + name + ", got " + std::string(v.type_name()));
  return v.get<std::string>();
}

// A rate the roofline divides by: positive and finite; nullopt where `optional` allows null.
std::optional<double> peak(const nlohmann::json& doc, const char* name, bool optional) {
  const auto it = doc.find(name);
  if (optional && (it == doc.end() || it->is_null())) return std::nullopt;
  if (it == doc.end()) malformed("an object with \"" + std::string(name) + "\"");
  if (!it->is_number()) malformed("a number at " + std::string(name) + ", got " + std::string(it->type_name()));
  const double v = it->get<double>();
  if (!(v > 0) || !std::isfinite(v)) {
    std::ostringstream seen;
    seen << v;
    malformed("a positive finite number at " + std::string(name) + ", got " + seen.str());
  }
  return v;
}

// The row's point, or nullopt for a row that failed or measured no FLOPs or no bytes.
std::optional<Point> point_of(const nlohmann::json& row, const std::string& where) {
  if (!row.is_object()) malformed("an object at " + where + ", got " + std::string(row.type_name()));
  std::string label = text_field(row, "op", where);
  label += " " + text_field(row, "case", where);
  if (row.contains("error")) return std::nullopt;
  double rate[2] = {0, 0};
  const char* names[2] = {"gbps", "gflops"};
  for (int i = 0; i < 2; ++i) {
    const auto it = row.find(names[i]);
    if (it == row.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) malformed("a number at " + where + "." + names[i] + ", got " + std::string(it->type_name()));
    rate[i] = it->get<double>();
  }
  if (!(rate[0] > 0 && rate[1] > 0) || !std::isfinite(rate[0]) || !std::isfinite(rate[1])) return std::nullopt;
  if (const auto k = row.find("kernels"); k != row.end() && !k->is_null()) {
    if (!k->is_array()) malformed("an array at " + where + ".kernels, got " + std::string(k->type_name()));
    std::string keys;
    for (std::size_t i = 0; i < k->size(); ++i) {
      const std::string at = where + ".kernels[" + std::to_string(i) + "]";
      if (!(*k)[i].is_object()) malformed("an object at " + at + ", got " + std::string((*k)[i].type_name()));
      keys += (keys.empty() ? "" : ", ") + text_field((*k)[i], "key", at);
    }
    label += " (" + (keys.empty() ? std::string("no kernel") : keys) + ")";
  }
  return Point{rate[1] / rate[0], rate[1], std::move(label)};
}

}  // namespace

std::string roofline_svg(std::string_view bench_json, std::string_view device) {
  const nlohmann::json doc = nlohmann::json::parse(bench_json, nullptr, false);
  if (doc.is_discarded()) malformed("JSON text (tileops bench --json's object); this text does not parse");
  if (!doc.is_object()) malformed("a JSON object, got " + std::string(doc.type_name()));
  const double peak_gbps = *peak(doc, "peak_gbps", false);
  const std::optional<double> peak_gflops = peak(doc, "peak_gflops", true);
  const nlohmann::json& rows = field(doc, "rows", "the top level");
  if (!rows.is_array()) malformed("an array at rows, got " + std::string(rows.type_name()));
  std::vector<Point> points;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (auto p = point_of(rows[i], "rows[" + std::to_string(i) + "]")) points.push_back(std::move(*p));
  }

  // Whole decades that hold every point and the roof's corner (or, with no compute ceiling, the
  // points and the bandwidth line over them).
  double x_lo = 0, x_hi = 0;
  if (peak_gflops) {
    x_lo = std::log10(*peak_gflops / peak_gbps) - 2;
    x_hi = x_lo + 4;
  } else {
    x_lo = points.empty() ? -1 : 1e300;
    x_hi = points.empty() ? 1 : -1e300;
  }
  double y_top = peak_gflops ? std::log10(*peak_gflops) : -1e300;
  for (const Point& p : points) {
    x_lo = std::min(x_lo, std::log10(p.intensity));
    x_hi = std::max(x_hi, std::log10(p.intensity));
    y_top = std::max(y_top, std::log10(p.gflops));
  }
  if (!peak_gflops) {
    // A decade of room on each side of the points, as the ridge gets with a compute ceiling.
    x_lo -= 1;
    x_hi += 1;
    y_top = std::max(y_top, std::log10(peak_gbps) + x_hi);
  }
  double y_lo = y_top - 4;
  for (const Point& p : points) y_lo = std::min(y_lo, std::log10(p.gflops));
  const LogAxis x{std::floor(x_lo), std::max(std::ceil(x_hi), std::floor(x_lo) + 1), kLeft, kWidth - kRight};
  const LogAxis y{std::floor(y_lo), std::ceil(y_top + 0.3), kHeight - kBottom, kTop};

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<title>tileops bench roofline on " << escaped(device) << "</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (double d = x.lo; d <= x.hi; ++d) {
    o << "<line class=\"grid\" x1=\"" << x.at(std::pow(10, d)) << "\" y1=\"" << kTop << "\" x2=\"" << x.at(std::pow(10, d))
      << "\" y2=\"" << kHeight - kBottom << "\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << x.at(std::pow(10, d)) << "\" y=\"" << kHeight - kBottom + 16 << "\" text-anchor=\"middle\">1e"
      << d << "</text>\n";
  }
  for (double d = y.lo; d <= y.hi; ++d) {
    o << "<line class=\"grid\" x1=\"" << kLeft << "\" y1=\"" << y.at(std::pow(10, d)) << "\" x2=\"" << kWidth - kRight
      << "\" y2=\"" << y.at(std::pow(10, d)) << "\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << kLeft - 6 << "\" y=\"" << y.at(std::pow(10, d)) + 4 << "\" text-anchor=\"end\">1e" << d
      << "</text>\n";
  }
  o << "<text x=\"" << (kLeft + kWidth - kRight) / 2 << "\" y=\"" << kHeight - 16
    << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte)</text>\n"
    << "<text x=\"16\" y=\"" << (kTop + kHeight - kBottom) / 2 << "\" transform=\"rotate(-90 16 "
    << (kTop + kHeight - kBottom) / 2 << ")\" text-anchor=\"middle\">achieved GFLOP/s</text>\n";
  // The roof: bandwidth times intensity, from where it enters the plot up to the ridge (or the
  // right edge), then the peak FLOP rate.
  const double left = std::pow(10, x.lo), right = std::pow(10, x.hi);
  const double enter = std::max(left, std::pow(10, y.lo) / peak_gbps);
  const double ridge = peak_gflops ? *peak_gflops / peak_gbps : right;
  o << "<polyline class=\"roof\" fill=\"none\" stroke=\"black\" stroke-width=\"2\" points=\"" << x.at(enter) << ","
    << y.at(enter * peak_gbps) << " " << x.at(ridge) << "," << y.at(ridge * peak_gbps);
  if (peak_gflops) o << " " << x.at(right) << "," << y.at(*peak_gflops);
  o << "\"/>\n";
  if (peak_gflops) {
    o << "<text x=\"" << x.at(right) - 4 << "\" y=\"" << y.at(*peak_gflops) - 6 << "\" text-anchor=\"end\">"
      << *peak_gflops << " GFLOP/s</text>\n";
  }
  o << "<text x=\"" << x.at(left) + 4 << "\" y=\"" << kTop + 14 << "\">" << peak_gbps << " GB/s, " << escaped(device)
    << (peak_gflops ? "" : " (no FLOP peak: the bandwidth ceiling only)") << "</text>\n";
  for (const Point& p : points) {
    o << "<circle class=\"row\" cx=\"" << x.at(p.intensity) << "\" cy=\"" << y.at(p.gflops)
      << "\" r=\"4\" fill=\"#1f77b4\"><title>" << escaped(p.label) << "</title></circle>\n"
      << "<text x=\"" << x.at(p.intensity) + 6 << "\" y=\"" << y.at(p.gflops) + 4 << "\" font-size=\"9\">"
      << escaped(p.label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace tileops
