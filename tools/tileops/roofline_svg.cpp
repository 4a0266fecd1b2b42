#include "roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "op_report.hpp"

namespace tileops::cli {
namespace {

constexpr double kWidth = 900, kHeight = 600, kLeft = 80, kRight = 30, kTop = 40, kBottom = 60;

std::string escaped(const std::string& text) {
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

}  // namespace

std::string roofline_svg(const nlohmann::json& rows, double peak_gbps, double peak_gflops, const std::string& device) {
  struct Point {
    double intensity, gflops;
    std::string label;
  };
  std::vector<Point> points;
  for (const auto& row : rows) {
    if (row.contains("error") || !row.contains("gflops") || !row.contains("gbps")) continue;
    const double gflops = row["gflops"].get<double>(), gbps = row["gbps"].get<double>();
    if (!(gflops > 0 && gbps > 0)) continue;
    std::string label = row["op"].get<std::string>() + " " + row["case"].get<std::string>();
    if (row.contains("kernels")) label += " (" + kernels_text(row["kernels"]) + ")";
    points.push_back({gflops / gbps, gflops, label});
  }
  // Decades that hold every point and both ceilings' corner.
  const double ridge = peak_gflops / peak_gbps;
  double x_lo = std::log10(ridge) - 2, x_hi = std::log10(ridge) + 2, y_lo = std::log10(peak_gflops) - 4;
  for (const Point& p : points) {
    x_lo = std::min(x_lo, std::log10(p.intensity));
    x_hi = std::max(x_hi, std::log10(p.intensity));
    y_lo = std::min(y_lo, std::log10(p.gflops));
  }
  const LogAxis x{std::floor(x_lo), std::ceil(x_hi), kLeft, kWidth - kRight};
  const LogAxis y{std::floor(y_lo), std::ceil(std::log10(peak_gflops) + 0.3), kHeight - kBottom, kTop};

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
  // The ceilings: bandwidth times intensity up to the ridge, then the peak FLOP rate.
  const double left = std::pow(10, x.lo), right = std::pow(10, x.hi);
  o << "<polyline class=\"roof\" fill=\"none\" stroke=\"black\" stroke-width=\"2\" points=\"" << x.at(left) << ","
    << y.at(std::max(left * peak_gbps, std::pow(10, y.lo))) << " " << x.at(ridge) << "," << y.at(peak_gflops) << " "
    << x.at(right) << "," << y.at(peak_gflops) << "\"/>\n"
    << "<text x=\"" << x.at(right) - 4 << "\" y=\"" << y.at(peak_gflops) - 6 << "\" text-anchor=\"end\">" << peak_gflops
    << " GFLOP/s</text>\n"
    << "<text x=\"" << x.at(left) + 4 << "\" y=\"" << kTop + 14 << "\">" << peak_gbps << " GB/s, " << escaped(device)
    << "</text>\n";
  for (const Point& p : points) {
    o << "<circle class=\"row\" cx=\"" << x.at(p.intensity) << "\" cy=\"" << y.at(p.gflops)
      << "\" r=\"4\" fill=\"#1f77b4\"><title>" << escaped(p.label) << "</title></circle>\n"
      << "<text x=\"" << x.at(p.intensity) + 6 << "\" y=\"" << y.at(p.gflops) + 4 << "\" font-size=\"9\">"
      << escaped(p.label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace tileops::cli
