#include "report/roofline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

const char* kComputeColour = "#d62728";
const char* kMemoryColour = "#1f77b4";
const char* kOverheadColour = "#e6a100";
const char* kGroupColour = "#222";

const char* bound_colour(Bound bound) {
  return bound == Bound::kCompute ? kComputeColour : bound == Bound::kOverhead ? kOverheadColour : kMemoryColour;
}
const char* kRoofColours[] = {"#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"};

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string si(double v, const char* unit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:g} {}{}", std::round(v * 100) / 100, prefixes[i], unit);
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "…"; }
// Node names are paths ("/encoder/layer.3/attention/MatMul"): their tail tells them apart.
std::string shorten_tail(const std::string& s, size_t n) { return s.size() <= n ? s : "…" + s.substr(s.size() - (n - 1)); }

// A log10 axis over whole decades.
struct LogAxis {
  double lo = 0, hi = 1;  // decades
  double from = 0, to = 1;  // pixels
  double operator()(double v) const { return from + (std::log10(v) - lo) / (hi - lo) * (to - from); }
};

struct Mark {
  size_t node;
  double intensity, achieved;
};

}  // namespace

std::string render_roofline_svg(const RooflineReport& report, const Analysis& analysis, const RooflineSvgOptions& options) {
  const Device& device = *report.device;
  const double bandwidth = report.ceilings.bandwidth_bytes_per_s > 0 ? report.ceilings.bandwidth_bytes_per_s : device.bandwidth_bytes_per_s();
  const double sheet_bandwidth = device.bandwidth_bytes_per_s();
  const double W = options.width, H = options.height;
  const double left = 90, right = W - 320, top = 78, bottom = H - 130;

  // Costed nodes with both FLOPs and bytes sit on the log-log plane; 0-FLOP data movement goes in a strip.
  std::vector<Mark> marks;
  std::vector<size_t> movers;
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    const NodeRoofline& n = report.nodes[i];
    if (!n.costed || !n.launches) continue;
    if (n.flops > 0 && n.bytes > 0) marks.push_back({i, n.intensity, n.flops / (n.predicted_us * 1e-6)});
    else if (n.flops > 0) marks.push_back({i, 0, n.flops / (n.predicted_us * 1e-6)});  // no bytes: pinned right
    else movers.push_back(i);
  }

  double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
  // Widens the axes to a point (an intensity of 0 is unknown and leaves x alone).
  auto include = [&](double intensity, double achieved) {
    if (intensity > 0) {
      x_min = std::min(x_min, intensity);
      x_max = std::max(x_max, intensity);
    }
    y_min = std::min(y_min, achieved);
    y_max = std::max(y_max, achieved);
  };
  for (const auto& m : marks) include(m.intensity, m.achieved);
  for (const auto& p : options.measured)
    if (p.present && p.achieved_flops > 0) include(p.intensity, p.achieved_flops);
  for (const auto& roof : report.roofs) {
    x_max = std::max(x_max, roof.ridge_intensity);
    x_min = std::min(x_min, roof.ridge_intensity);
    y_max = std::max({y_max, roof.peak_flops, roof.datasheet_peak_flops});
  }
  for (const auto& g : report.groups)
    if (g.launches && g.flops > 0 && g.predicted_us > 0) include(g.intensity, g.flops / (g.predicted_us * 1e-6));
  if (x_max <= 0) x_min = 0.1, x_max = 100;
  if (y_max <= 0) y_min = 1e9, y_max = 1e12;
  LogAxis x{std::floor(std::log10(x_min)) - 0.0, std::ceil(std::log10(x_max * 1.5)), left, right};
  if (x.hi - x.lo < 2) x.lo = x.hi - 2;
  LogAxis y{std::floor(std::log10(y_min)), std::ceil(std::log10(y_max * 1.5)), bottom, top};
  y.lo = std::max(y.lo, y.hi - 9);  // keep 9 decades at most: a stray tiny node must not squash the roofs
  if (y.hi - y.lo < 2) y.lo = y.hi - 2;
  const double y_floor = std::pow(10.0, y.lo), x_ceiling = std::pow(10.0, x.hi), x_floor = std::pow(10.0, x.lo);

  std::string s;
  s += fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
)", W, H);
  s += fmt::format(R"(<text x="{}" y="26" font-size="15" font-weight="bold">{}</text>
)", left, xml_escape(shorten(report.verdict, 150)));
  s += fmt::format(R"(<text x="{}" y="46" fill="#444">Roofline of {} ({} GB/s). x: arithmetic intensity (FLOP/byte); y: predicted FLOP/s incl. kernel overhead; dashed: datasheet roof. Hover a mark for the node or kernel.</text>
)", left, xml_escape(device.name), fmt::format("{:g}", device.memory_bandwidth_gbps));

  // Grid and decade ticks.
  s += "<g stroke=\"#e6e6e6\">\n";
  for (double d = x.lo; d <= x.hi + 1e-9; ++d) s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x(std::pow(10.0, d)), top, bottom);
  for (double d = y.lo; d <= y.hi + 1e-9; ++d) s += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>\n", y(std::pow(10.0, d)), left, right);
  s += "</g>\n<g fill=\"#333\">\n";
  for (double d = x.lo; d <= x.hi + 1e-9; ++d)
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", x(std::pow(10.0, d)), bottom + 18, std::pow(10.0, d));
  for (double d = y.lo; d <= y.hi + 1e-9; ++d)
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 8, y(std::pow(10.0, d)) + 4, si(std::pow(10.0, d), "FLOP/s"));
  s += "</g>\n";
  s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>
<text x="{}" y="{}" text-anchor="middle">arithmetic intensity (FLOP/byte, log)</text>
)", left, top, right - left, bottom - top, (left + right) / 2, bottom + 38);

  // One roof per (math path, dtype) in use: the bandwidth slope up to the ridge point, then the peak.
  s += "<g fill=\"none\" stroke-width=\"2\">\n";
  for (size_t i = 0; i < report.roofs.size(); ++i) {
    const Roof& roof = report.roofs[i];
    const char* colour = kRoofColours[i % (sizeof(kRoofColours) / sizeof(kRoofColours[0]))];
    const double start_x = std::max(x_floor, y_floor / bandwidth);
    const double ridge = std::min(roof.ridge_intensity, x_ceiling);
    s += fmt::format("<polyline stroke=\"{}\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"><title>{}</title></polyline>\n",
                     colour, x(start_x), y(std::max(y_floor, start_x * bandwidth)), x(ridge), y(std::min(roof.peak_flops, ridge * bandwidth)),
                     x(x_ceiling), y(roof.peak_flops),
                     xml_escape(fmt::format("{} {} peak {}, ridge at {:.3g} FLOP/byte, {} nodes", math_path_name(roof.path),
                                            roof.dtype, si(roof.peak_flops, "FLOP/s"), roof.ridge_intensity, roof.nodes)));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" stroke=\"none\" text-anchor=\"end\">{} {}: {}</text>\n", right - 6,
                     y(roof.peak_flops) - 5, colour, math_path_name(roof.path), roof.dtype, si(roof.peak_flops, "FLOP/s"));
    // The datasheet roof above an achievable ceiling: the upper bound, dashed.
    if (roof.datasheet_peak_flops > roof.peak_flops * 1.001 || sheet_bandwidth > bandwidth * 1.001) {
      const double sheet_ridge = std::min(roof.datasheet_peak_flops / sheet_bandwidth, x_ceiling);
      const double sheet_start = std::max(x_floor, y_floor / sheet_bandwidth);
      s += fmt::format("<polyline class=\"datasheet\" stroke=\"{}\" stroke-dasharray=\"5 4\" stroke-width=\"1\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"><title>{}</title></polyline>\n",
                       colour, x(sheet_start), y(std::max(y_floor, sheet_start * sheet_bandwidth)), x(sheet_ridge),
                       y(std::min(roof.datasheet_peak_flops, sheet_ridge * sheet_bandwidth)), x(x_ceiling), y(roof.datasheet_peak_flops),
                       xml_escape(fmt::format("datasheet {} {} peak {} at {:g} GB/s (upper bound)", math_path_name(roof.path), roof.dtype,
                                              si(roof.datasheet_peak_flops, "FLOP/s"), sheet_bandwidth / 1e9)));
    }
  }
  s += "</g>\n";
  if (!report.roofs.empty()) {
    // The bandwidth label runs along the slope, a decade in from its start.
    const double bx = std::max(x_floor * 3, y_floor * 10 / bandwidth);
    const double dx = x(bx * 10) - x(bx), dy = y(bx * 10 * bandwidth) - y(bx * bandwidth);
    const double lx0 = x(bx) + 4, ly0 = y(bx * bandwidth) - 6;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\" transform=\"rotate({:.1f} {:.1f} {:.1f})\">{} GB/s</text>\n", lx0, ly0,
                     std::atan2(dy, dx) * 180 / M_PI, lx0, ly0, fmt::format("{:.4g}", bandwidth / 1e9));
  }

  // Heaviest nodes by predicted time get numbers.
  std::vector<size_t> order(report.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return report.nodes[a].predicted_us > report.nodes[b].predicted_us; });
  std::vector<int> rank(report.nodes.size(), 0);
  size_t ranked = 0;
  for (size_t i : order) {
    if (ranked >= options.annotate_top || !report.nodes[i].launches) break;
    rank[i] = static_cast<int>(++ranked);
  }
  double max_share = 0;
  for (const auto& n : report.nodes) max_share = std::max(max_share, n.share);

  auto tooltip = [&](size_t i) {
    const NodeRoofline& n = report.nodes[i];
    const Node& node = *analysis.nodes[i].node;
    return xml_escape(fmt::format("{} ({}): {}-bound, {:.3g} us ({:.1f}% of total); {:.4g} FLOP, {:.4g} bytes, {:.3g} FLOP/byte; "
                                  "{} {} peak {}", node.name, node.op_type, bound_name(n.bound), n.predicted_us, n.share * 100,
                                  n.flops, n.bytes, n.intensity, math_path_name(n.path), n.peak_dtype, si(n.peak_flops, "FLOP/s")));
  };

  // Marks, lightest first so the heavy ones are drawn on top.
  std::sort(marks.begin(), marks.end(), [&](const Mark& a, const Mark& b) {
    return report.nodes[a.node].predicted_us < report.nodes[b.node].predicted_us;
  });
  s += "<g stroke=\"white\" stroke-width=\"0.6\">\n";
  std::vector<std::pair<double, double>> placed;
  for (const auto& m : marks) {
    const NodeRoofline& n = report.nodes[m.node];
    const double cx = m.intensity > 0 ? x(std::clamp(m.intensity, x_floor, x_ceiling)) : right;
    const double cy = y(std::clamp(m.achieved, y_floor, std::pow(10.0, y.hi)));
    const double r = 3 + 8 * std::sqrt(max_share > 0 ? n.share / max_share : 0);
    s += fmt::format("<circle class=\"node {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.75\"><title>{}</title></circle>\n",
                     bound_name(n.bound), cx, cy, r, bound_colour(n.bound), tooltip(m.node));
    if (rank[m.node]) {
      // Nudge the number down until it clears the numbers already placed.
      double tx = cx + r + 2, ty = cy - r + 6;
      for (int tries = 0; tries < 8; ++tries) {
        bool clear = true;
        for (const auto& [px, py] : placed) clear = clear && (std::fabs(px - tx) > 16 || std::fabs(py - ty) > 11);
        if (clear) break;
        ty += 11;
      }
      placed.emplace_back(tx, ty);
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" font-weight=\"bold\" fill=\"#000\" stroke=\"none\">{}</text>\n",
                       tx, ty, rank[m.node]);
    }
  }
  s += "</g>\n";

  // Measured places: hollow marks joined to the predicted ones.
  size_t measured_marks = 0;
  if (!options.measured.empty()) {
    s += "<g fill=\"none\" stroke-width=\"1.4\">\n";
    for (const auto& m : marks) {
      if (m.node >= options.measured.size()) continue;
      const MeasuredPoint& p = options.measured[m.node];
      if (!p.present || p.achieved_flops <= 0) continue;
      const NodeRoofline& n = report.nodes[m.node];
      const char* colour = bound_colour(n.bound);
      const double px = m.intensity > 0 ? x(std::clamp(m.intensity, x_floor, x_ceiling)) : right;
      const double py = y(std::clamp(m.achieved, y_floor, std::pow(10.0, y.hi)));
      const double mx = p.intensity > 0 ? x(std::clamp(p.intensity, x_floor, x_ceiling)) : px;
      const double my = y(std::clamp(p.achieved_flops, y_floor, std::pow(10.0, y.hi)));
      s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-opacity=\"0.35\"/>\n", px, py, mx,
                       my, colour);
      s += fmt::format("<circle class=\"measured\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" stroke=\"{}\"><title>{}</title></circle>\n", mx, my,
                       colour,
                       xml_escape(fmt::format("{} measured: {} achieved at {:.3g} FLOP/byte ({})", analysis.nodes[m.node].node->name,
                                              si(p.achieved_flops, "FLOP/s"), p.intensity,
                                              p.measured_intensity ? "measured intensity" : "analytic intensity")));
      ++measured_marks;
    }
    s += "</g>\n";
  }

  // Deployed kernels: one hollow diamond per fused group, at the group's boundary intensity.
  size_t group_marks = 0;
  s += "<g fill=\"none\" stroke-width=\"1.2\">\n";
  for (size_t k = 0; k < report.groups.size(); ++k) {
    const NodeRoofline& g = report.groups[k];
    if (!g.launches || g.flops <= 0 || g.predicted_us <= 0 || !report.fusion) continue;
    const FusedGroup& fg = report.fusion->groups[k];
    const double gx = g.intensity > 0 ? x(std::clamp(g.intensity, x_floor, x_ceiling)) : right;
    const double gy = y(std::clamp(g.flops / (g.predicted_us * 1e-6), y_floor, std::pow(10.0, y.hi)));
    s += fmt::format("<path class=\"group {}\" d=\"M{:.1f},{:.1f} l5,5 l-5,5 l-5,-5 z\" stroke=\"{}\"><title>{}</title></path>\n",
                     bound_name(g.bound), gx, gy - 5, bound_colour(g.bound),
                     xml_escape(fmt::format("kernel #{} {} ({} nodes from {}): {}-bound, {:.3g} us deployed; {:.4g} FLOP, {:.4g} bytes",
                                            fg.id, fg.label, fg.members.size(), analysis.nodes[fg.members.front()].node->name,
                                            bound_name(g.bound), g.predicted_us, g.flops, g.bytes)));
    ++group_marks;
  }
  s += "</g>\n";

  // Data movement (no FLOPs): one square per node in a strip under the axis, in graph order.
  const double strip_y = bottom + 62;
  s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#333\">0-FLOP nodes (data movement): {}</text>\n", left, strip_y - 8,
                   movers.size());
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#f7f7f7\" stroke=\"#ddd\"/>\n<g>\n", left, strip_y, right - left);
  for (size_t k = 0; k < movers.size(); ++k) {
    const size_t i = movers[k];
    const double cx = left + 6 + (right - left - 12) * (movers.size() == 1 ? 0.5 : static_cast<double>(k) / (movers.size() - 1));
    s += fmt::format("<rect class=\"node {}\" x=\"{:.1f}\" y=\"{}\" width=\"6\" height=\"12\" fill=\"{}\" fill-opacity=\"0.75\"><title>{}</title></rect>\n",
                     bound_name(report.nodes[i].bound), cx - 3, strip_y + 5, bound_colour(report.nodes[i].bound), tooltip(i));
    if (rank[i])
      s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" font-weight=\"bold\">{}</text>\n", cx - 3, strip_y + 36, rank[i]);
  }
  s += "</g>\n";

  // Legend: bound colours, then the numbered heaviest nodes.
  const double lx = right + 24;
  double ly = top + 4;
  s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">compute-bound ({})</text>\n", lx + 6, ly, kComputeColour,
                   lx + 18, ly + 4, report.totals.compute_bound);
  ly += 20;
  s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">memory-bound ({})</text>\n", lx + 6, ly, kMemoryColour,
                   lx + 18, ly + 4, report.totals.memory_bound);
  ly += 20;
  s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">overhead-bound ({})</text>\n", lx + 6, ly,
                   kOverheadColour, lx + 18, ly + 4, report.totals.overhead_bound);
  ly += 18;
  s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">mark area ~ share of predicted time</text>\n", lx, ly + 4);
  if (group_marks) {
    ly += 18;
    s += fmt::format("<path d=\"M{},{} l5,5 l-5,5 l-5,-5 z\" fill=\"none\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" fill=\"#555\">deployed kernel ({} fused groups)</text>\n",
                     lx + 6, ly - 5, kGroupColour, lx + 18, ly + 4, group_marks);
  }
  if (measured_marks) {
    ly += 18;
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.4\"/><text x=\"{}\" y=\"{}\" "
                     "fill=\"#555\">measured ({} nodes)</text>\n",
                     lx + 6, ly, lx + 18, ly + 4, measured_marks);
  }
  ly += 30;
  s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Heaviest nodes (predicted time)</text>\n", lx, ly);
  ly += 16;
  s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" font-size=\"11\">number colour = bound</text>\n", lx, ly);
  for (size_t i : order) {
    if (!rank[i]) continue;
    ly += 18;
    const NodeRoofline& n = report.nodes[i];
    s += fmt::format("<text x=\"{}\" y=\"{}\"><tspan font-weight=\"bold\" fill=\"{}\">{}.</tspan> {} <tspan fill=\"#555\">{:.3g} us, {:.1f}%</tspan><title>{}</title></text>\n",
                     lx, ly, bound_colour(n.bound), rank[i],
                     xml_escape(shorten_tail(analysis.nodes[i].node->name, 26)), n.predicted_us, n.share * 100, tooltip(i));
  }
  ly += 30;
  s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">as written {:.3g} ms over {} kernels</text>\n", lx, ly,
                   report.totals.predicted_latency_ms, report.totals.launches);
  if (report.fusion) {
    ly += 18;
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">deployed {:.3g} ms over {} kernels</text>\n", lx, ly,
                     report.deployed.predicted_latency_ms, report.deployed.launches);
  }
  if (report.totals.uncosted)
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#a00\">{} uncosted nodes not shown</text>\n", lx, ly + 18, report.totals.uncosted);
  s += "</svg>\n";
  return s;
}

void write_roofline_svg(const std::string& path, const RooflineReport& report, const Analysis& analysis,
                        const RooflineSvgOptions& options) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(kExitUnreadable, "cannot write the roofline SVG '" + path + "'");
  out << render_roofline_svg(report, analysis, options);
  if (!out) throw Error(kExitUnreadable, "cannot write the roofline SVG '" + path + "'");
}

}  // namespace modelcost
