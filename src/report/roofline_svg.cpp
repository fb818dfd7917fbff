#include "report/roofline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <unordered_set>
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

// Text labels placed so that none overlaps another (or a mark it was told about): each label tries
// candidate positions in order and takes the first free one. Boxes are estimated from the font size.
class LabelPlacer {
 public:
  struct Box {
    double x0, y0, x1, y1;
  };
  void block(const Box& b) { taken_.push_back(b); }
  // `x`, `y`: the text's anchor (start, baseline) at each candidate offset; returns the chosen one.
  // `avoid`: more boxes to keep clear of (marks), not kept for later labels.
  std::pair<double, double> place(const std::vector<std::pair<double, double>>& candidates, double width, double height,
                                  const std::vector<Box>& avoid = {}) {
    auto apart = [](const Box& b, const Box& t) { return b.x1 <= t.x0 || b.x0 >= t.x1 || b.y1 <= t.y0 || b.y0 >= t.y1; };
    for (const auto& [x, y] : candidates) {
      const Box b{x - kGap, y - height - kGap, x + width + kGap, y + 2 + kGap};  // a gap keeps "10" and "2" apart
      bool clear = true;
      for (const auto& t : taken_) clear = clear && apart(b, t);
      for (const auto& t : avoid) clear = clear && apart(b, t);
      if (clear) {
        taken_.push_back(b);
        return {x, y};
      }
    }
    const auto [x, y] = candidates.front();
    taken_.push_back({x, y - height, x + width, y + 2});
    return candidates.front();
  }

 private:
  static constexpr double kGap = 2;
  std::vector<Box> taken_;
};

double text_width(const std::string& text, double font_size) { return 0.6 * font_size * static_cast<double>(text.size()); }

// One plot: the geometry and the state shared by its parts, each drawn by one method.
class RooflinePlot {
 public:
  RooflinePlot(const RooflineReport& report, const Analysis& analysis, const RooflineSvgOptions& options)
      : report_(report), analysis_(analysis), options_(options), device_(*report.device),
        bandwidth_(report.ceilings.bandwidth_bytes_per_s > 0 ? report.ceilings.bandwidth_bytes_per_s : device_.bandwidth_bytes_per_s()),
        sheet_bandwidth_(device_.bandwidth_bytes_per_s()), right_(options.width - 320), bottom_(options.height - 130) {
    collect_marks();
    place_axes();
    rank_heaviest();
  }

  RooflineSvgAxes axes() const { return {x_.lo, x_.hi, y_.lo, y_.hi}; }

  std::string render() {
    s_ += fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
)", options_.width, options_.height);
    draw_frame();
    draw_roofs();
    draw_marks();
    const size_t measured = draw_measured();
    const size_t groups = draw_groups();
    draw_numbers();
    draw_strip();
    draw_legend(measured, groups);
    s_ += "</svg>\n";
    return std::move(s_);
  }

 private:
  static constexpr double kLeft = 112, kTop = 78;
  const RooflineReport& report_;
  const Analysis& analysis_;
  const RooflineSvgOptions& options_;
  const Device& device_;
  const double bandwidth_, sheet_bandwidth_, right_, bottom_;  // achievable (calibrated) and datasheet bandwidth
  std::vector<Mark> marks_;     // costed nodes with FLOPs, on the log-log plane
  std::vector<size_t> movers_;  // 0-FLOP data movement, in a strip below
  LogAxis x_, y_;
  double x_floor_ = 0, x_ceiling_ = 0, y_floor_ = 0, y_ceiling_ = 0;
  std::vector<size_t> order_;  // nodes by predicted time, heaviest first
  std::vector<int> rank_;      // 1.. for the numbered heaviest nodes, 0 for the others
  LabelPlacer labels_;         // roof labels first, then node numbers: none overlaps another
  struct Numbered {
    size_t node;
    double cx, cy, r;
  };
  std::vector<Numbered> numbered_;  // the heaviest nodes' marks, numbered by draw_numbers
  std::string s_;

  double px(double intensity) const { return x_(std::clamp(intensity, x_floor_, x_ceiling_)); }
  double py(double flops) const { return y_(std::clamp(flops, y_floor_, y_ceiling_)); }
  const char* node_colour(size_t node) const { return bound_colour(report_.nodes[node].bound); }
  double mark_radius(size_t node) const {
    double max_share = 0;
    for (const auto& n : report_.nodes) max_share = std::max(max_share, n.share);
    return 3 + 8 * std::sqrt(max_share > 0 ? report_.nodes[node].share / max_share : 0);
  }
  std::vector<LabelPlacer::Box> mark_boxes() const {
    std::vector<LabelPlacer::Box> boxes;
    for (const auto& m : marks_) {
      const double cx = m.intensity > 0 ? px(m.intensity) : right_, cy = py(m.achieved), r = mark_radius(m.node);
      boxes.push_back({cx - r, cy - r, cx + r, cy + r});
    }
    return boxes;
  }

  void collect_marks() {
    for (size_t i = 0; i < report_.nodes.size(); ++i) {
      const NodeRoofline& n = report_.nodes[i];
      if (!n.costed || !n.launches) continue;
      if (n.flops > 0 && n.bytes > 0) marks_.push_back({i, n.intensity, n.flops / (n.predicted_us * 1e-6)});
      else if (n.flops > 0) marks_.push_back({i, 0, n.flops / (n.predicted_us * 1e-6)});  // no bytes: pinned right
      else movers_.push_back(i);
    }
  }

  void place_axes() {
    double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
    // Widens the axes to a point (an intensity of 0 is unknown and leaves x alone).
    auto include = [&](double intensity, double achieved) {
      if (intensity > 0) x_min = std::min(x_min, intensity), x_max = std::max(x_max, intensity);
      y_min = std::min(y_min, achieved);
      y_max = std::max(y_max, achieved);
    };
    for (const auto& m : marks_) include(m.intensity, m.achieved);
    for (const auto& p : options_.measured)
      if (p.present && p.achieved_flops > 0) include(p.intensity, p.achieved_flops);
    for (const auto& roof : report_.roofs) {
      x_max = std::max(x_max, roof.ridge_intensity);
      x_min = std::min(x_min, roof.ridge_intensity);
      y_max = std::max({y_max, roof.peak_flops, roof.datasheet_peak_flops});
    }
    for (const auto& g : report_.groups)
      if (g.launches && g.flops > 0 && g.predicted_us > 0) include(g.intensity, g.flops / (g.predicted_us * 1e-6));
    if (x_max <= 0) x_min = 0.1, x_max = 100;
    if (y_max <= 0) y_min = 1e9, y_max = 1e12;
    x_ = LogAxis{std::floor(std::log10(x_min)), std::ceil(std::log10(x_max * 1.5)), kLeft, right_};
    if (x_.hi - x_.lo < 2) x_.lo = x_.hi - 2;
    y_ = LogAxis{std::floor(std::log10(y_min)), std::ceil(std::log10(y_max * 1.5)), bottom_, kTop};
    y_.lo = std::max(y_.lo, y_.hi - 9);  // keep 9 decades at most: a stray tiny node must not squash the roofs
    if (y_.hi - y_.lo < 2) y_.lo = y_.hi - 2;
    if (const auto& shared = options_.shared_axes) {
      x_.lo = std::min(x_.lo, shared->x_lo), x_.hi = std::max(x_.hi, shared->x_hi);
      y_.lo = std::min(y_.lo, shared->y_lo), y_.hi = std::max(y_.hi, shared->y_hi);
    }
    x_floor_ = std::pow(10.0, x_.lo), x_ceiling_ = std::pow(10.0, x_.hi);
    y_floor_ = std::pow(10.0, y_.lo), y_ceiling_ = std::pow(10.0, y_.hi);
  }

  void rank_heaviest() {
    order_.resize(report_.nodes.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return report_.nodes[a].predicted_us > report_.nodes[b].predicted_us; });
    rank_.assign(report_.nodes.size(), 0);
    size_t ranked = 0;
    for (size_t i : order_) {
      if (ranked >= options_.annotate_top || !report_.nodes[i].launches) break;
      rank_[i] = static_cast<int>(++ranked);
    }
  }

  std::string tooltip(size_t i) const {
    const NodeRoofline& n = report_.nodes[i];
    const Node& node = *analysis_.nodes[i].node;
    return xml_escape(fmt::format("{} ({}): {}-bound, {:.3g} us ({:.1f}% of total); {:.4g} FLOP, {:.4g} bytes, {:.3g} FLOP/byte; "
                                  "{} {} peak {}", node.name, node.op_type, bound_name(n.bound), n.predicted_us, n.share * 100,
                                  n.flops, n.bytes, n.intensity, math_path_name(n.path), n.peak_dtype, si(n.peak_flops, "FLOP/s")));
  }

  // Title, grid, decade ticks and both axis titles.
  void draw_frame() {
    // Three lines that fit the width: the verdict's subject, its finding, what the axes show.
    const double room = options_.width - kLeft - 12;
    const size_t colon = report_.verdict.find(": ");
    const std::string subject = report_.verdict.substr(0, colon);
    const std::string finding = colon == std::string::npos ? "" : report_.verdict.substr(colon + 2);
    auto fitting = [room](const std::string& text, double font) { return shorten(text, static_cast<size_t>(room / (0.6 * font))); };
    s_ += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", kLeft, xml_escape(fitting(subject, 15)));
    s_ += fmt::format("<text x=\"{}\" y=\"41\">{}</text>\n", kLeft, xml_escape(fitting(finding, 12)));
    s_ += fmt::format("<text x=\"{}\" y=\"58\" fill=\"#444\" font-size=\"11\">{}<title>Hover a mark for the node or kernel.</title></text>\n",
                      kLeft, xml_escape(fitting(fmt::format("Roofline of {} ({:g} GB/s). x: arithmetic intensity (FLOP/byte); y: predicted "
                                                            "FLOP/s incl. kernel overhead; dashed: datasheet roof.",
                                                            device_.name, device_.memory_bandwidth_gbps), 11)));
    s_ += "<g stroke=\"#e6e6e6\">\n";
    for (double d = x_.lo; d <= x_.hi + 1e-9; ++d)
      s_ += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x_(std::pow(10.0, d)), kTop, bottom_);
    for (double d = y_.lo; d <= y_.hi + 1e-9; ++d)
      s_ += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\"/>\n", y_(std::pow(10.0, d)), kLeft, right_);
    s_ += "</g>\n<g fill=\"#333\">\n";
    for (double d = x_.lo; d <= x_.hi + 1e-9; ++d)
      s_ += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", x_(std::pow(10.0, d)), bottom_ + 18, std::pow(10.0, d));
    for (double d = y_.lo; d <= y_.hi + 1e-9; ++d)
      s_ += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 8, y_(std::pow(10.0, d)) + 4,
                        si(std::pow(10.0, d), "FLOP/s"));
    s_ += "</g>\n";
    const double middle = (kTop + bottom_) / 2;
    s_ += fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>
<text x="{}" y="{}" text-anchor="middle">arithmetic intensity (FLOP/byte, log)</text>
<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">predicted FLOP/s (log), launch overhead included</text>
)svg", kLeft, kTop, right_ - kLeft, bottom_ - kTop, (kLeft + right_) / 2, bottom_ + 38, middle, middle);
  }

  // One roof per (math path, dtype) in use: the bandwidth slope up to the ridge point, then the peak.
  void draw_roofs() {
    s_ += "<g fill=\"none\" stroke-width=\"2\">\n";
    for (size_t i = 0; i < report_.roofs.size(); ++i) {
      const Roof& roof = report_.roofs[i];
      const char* colour = kRoofColours[i % (sizeof(kRoofColours) / sizeof(kRoofColours[0]))];
      const double start_x = std::max(x_floor_, y_floor_ / bandwidth_);
      const double ridge = std::min(roof.ridge_intensity, x_ceiling_);
      s_ += fmt::format("<polyline stroke=\"{}\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"><title>{}</title></polyline>\n",
                        colour, x_(start_x), y_(std::max(y_floor_, start_x * bandwidth_)), x_(ridge),
                        y_(std::min(roof.peak_flops, ridge * bandwidth_)), x_(x_ceiling_), y_(roof.peak_flops),
                        xml_escape(fmt::format("{} {} peak {}, ridge at {:.3g} FLOP/byte, {} nodes", math_path_name(roof.path),
                                               roof.dtype, si(roof.peak_flops, "FLOP/s"), roof.ridge_intensity, roof.nodes)));
      if (roof.ridge_intensity <= x_ceiling_) draw_ridge(roof, colour);
      const std::string text = fmt::format("{} {}: {}", math_path_name(roof.path), roof.dtype, si(roof.peak_flops, "FLOP/s"));
      const double w = text_width(text, 12), ly = y_(roof.peak_flops), lx = right_ - 6 - w;
      // Along the roof from its right end, just above it, clear of the marks that touch it; then higher.
      std::vector<std::pair<double, double>> candidates;
      for (double y_offset : {5.0, 14.0, 28.0})
        for (double x = lx; x >= x_(std::min(roof.ridge_intensity, x_ceiling_)) + 4 || x == lx; x -= 40) candidates.emplace_back(x, ly - y_offset);
      candidates.emplace_back(lx, ly + 15);
      const auto [tx, ty] = labels_.place(candidates, w, 12, mark_boxes());
      s_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" stroke=\"none\">{}</text>\n", tx, ty, colour, text);
      if (roof.datasheet_peak_flops > roof.peak_flops * 1.001 || sheet_bandwidth_ > bandwidth_ * 1.001) draw_datasheet_roof(roof, colour);
    }
    s_ += "</g>\n";
    if (report_.roofs.empty()) return;
    // The bandwidth label runs along the slope, a decade in from its start.
    const double bx = std::max(x_floor_ * 3, y_floor_ * 10 / bandwidth_);
    const double dx = x_(bx * 10) - x_(bx), dy = y_(bx * 10 * bandwidth_) - y_(bx * bandwidth_);
    const double lx0 = x_(bx) + 4, ly0 = y_(bx * bandwidth_) - 6;
    s_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\" transform=\"rotate({:.1f} {:.1f} {:.1f})\">{:.4g} GB/s</text>\n", lx0, ly0,
                      std::atan2(dy, dx) * 180 / M_PI, lx0, ly0, bandwidth_ / 1e9);
  }

  // The datasheet roof above an achievable ceiling: the upper bound, dashed.
  void draw_datasheet_roof(const Roof& roof, const char* colour) {
    const double sheet_ridge = std::min(roof.datasheet_peak_flops / sheet_bandwidth_, x_ceiling_);
    const double sheet_start = std::max(x_floor_, y_floor_ / sheet_bandwidth_);
    s_ += fmt::format("<polyline class=\"datasheet\" stroke=\"{}\" stroke-dasharray=\"5 4\" stroke-width=\"1\" points=\"{:.1f},{:.1f} "
                      "{:.1f},{:.1f} {:.1f},{:.1f}\"><title>{}</title></polyline>\n",
                      colour, x_(sheet_start), y_(std::max(y_floor_, sheet_start * sheet_bandwidth_)), x_(sheet_ridge),
                      y_(std::min(roof.datasheet_peak_flops, sheet_ridge * sheet_bandwidth_)), x_(x_ceiling_), y_(roof.datasheet_peak_flops),
                      xml_escape(fmt::format("datasheet {} {} peak {} at {:g} GB/s (upper bound)", math_path_name(roof.path), roof.dtype,
                                             si(roof.datasheet_peak_flops, "FLOP/s"), sheet_bandwidth_ / 1e9)));
  }

  // The ridge point: where a node's bound changes from memory to compute.
  void draw_ridge(const Roof& roof, const char* colour) {
    const double rx = x_(roof.ridge_intensity), ry = y_(roof.peak_flops);
    s_ += fmt::format("<path class=\"ridge\" d=\"M{:.1f},{:.1f} l5,5 l-5,5 l-5,-5 z\" fill=\"{}\" stroke=\"white\" stroke-width=\"1\"/>\n", rx,
                      ry - 5, colour);
    labels_.block({rx - 6, ry - 6, rx + 6, ry + 6});
    const std::string text = fmt::format("ridge {:.3g}", roof.ridge_intensity);
    const double w = text_width(text, 11);
    // Up and left of the ridge lies above every roof: no mark can be there.
    const auto [tx, ty] = labels_.place({{rx - w - 8, ry - 4}, {rx - w - 8, ry - 18}, {rx - w / 2, ry - 10}, {rx - w / 2, ry + 20}}, w, 11);
    s_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" stroke=\"none\" font-size=\"11\">{}</text>\n", tx, ty, colour, text);
  }

  // Marks, lightest first so the heavy ones are drawn on top; then the numbers of the heaviest.
  void draw_marks() {
    double max_share = 0;
    for (const auto& n : report_.nodes) max_share = std::max(max_share, n.share);
    std::sort(marks_.begin(), marks_.end(), [&](const Mark& a, const Mark& b) {
      return report_.nodes[a.node].predicted_us < report_.nodes[b.node].predicted_us;
    });
    s_ += "<g stroke=\"white\" stroke-width=\"0.6\">\n";
    // A mark the same as one drawn (a repeated layer) adds nothing to the picture, only bytes.
    std::unordered_set<std::string> drawn;
    for (const auto& m : marks_) {
      const NodeRoofline& n = report_.nodes[m.node];
      const double cx = m.intensity > 0 ? px(m.intensity) : right_, cy = py(m.achieved);
      const double r = 3 + 8 * std::sqrt(max_share > 0 ? n.share / max_share : 0);
      if (!rank_[m.node] && !drawn.insert(fmt::format("{:.0f},{:.0f},{:.0f},{}", cx, cy, 2 * r, bound_name(n.bound))).second) continue;
      s_ += fmt::format("<circle class=\"node {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.75\"><title>{}</title></circle>\n",
                        bound_name(n.bound), cx, cy, r, bound_colour(n.bound), tooltip(m.node));
      if (rank_[m.node]) numbered_.push_back({m.node, cx, cy, r});
    }
    s_ += "</g>\n";
  }

  // Numbers last, over every mark, each placed clear of the other labels and the numbered marks.
  void draw_numbers() {
    s_ += "<g>\n";
    for (const auto& [node, cx, cy, r] : numbered_) labels_.block({cx - r * 0.5, cy - r * 0.5, cx + r * 0.5, cy + r * 0.5});
    for (const auto& [node, cx, cy, r] : numbered_) {
      const std::string text = std::to_string(rank_[node]);
      const double w = text_width(text, 11);
      std::vector<std::pair<double, double>> candidates;
      for (double step = 0; step < 8; ++step)
        for (const auto& [dx, dy] : std::vector<std::pair<double, double>>{{1, 0}, {-1, 0}, {0, -1}, {0, 1}, {1, -1}, {-1, -1}, {1, 1}, {-1, 1}})
          candidates.emplace_back(cx + dx * (r + 2 + 9 * step) - (dx < 0 ? w : dx == 0 ? w / 2 : 0),
                                  cy + dy * (r + 2 + 9 * step) + (dy > 0 ? 10 : dy == 0 ? 4 : 0));
      const auto [tx, ty] = labels_.place(candidates, w, 11);
      s_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" font-weight=\"bold\" fill=\"#000\" stroke=\"none\">{}</text>\n", tx, ty,
                        text);
    }
    s_ += "</g>\n";
  }

  // Measured places: hollow marks joined to the predicted ones. Returns how many were drawn.
  size_t draw_measured() {
    if (options_.measured.empty()) return 0;
    size_t drawn = 0;
    s_ += "<g fill=\"none\" stroke-width=\"1.4\">\n";
    for (const auto& m : marks_) {
      if (m.node >= options_.measured.size()) continue;
      const MeasuredPoint& p = options_.measured[m.node];
      if (!p.present || p.achieved_flops <= 0) continue;
      const double x0 = m.intensity > 0 ? px(m.intensity) : right_, y0 = py(m.achieved);
      const double x1 = p.intensity > 0 ? px(p.intensity) : x0, y1 = py(p.achieved_flops);
      s_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-opacity=\"0.35\"/>\n", x0, y0, x1, y1,
                        node_colour(m.node));
      s_ += fmt::format("<circle class=\"measured\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" stroke=\"{}\"><title>{}</title></circle>\n", x1, y1,
                        node_colour(m.node),
                        xml_escape(fmt::format("{} measured: {} achieved at {:.3g} FLOP/byte ({})", analysis_.nodes[m.node].node->name,
                                               si(p.achieved_flops, "FLOP/s"), p.intensity,
                                               p.measured_intensity ? "measured intensity" : "analytic intensity")));
      ++drawn;
    }
    s_ += "</g>\n";
    return drawn;
  }

  // Deployed kernels: one hollow diamond per fused group, at the group's boundary intensity.
  size_t draw_groups() {
    size_t drawn = 0;
    s_ += "<g fill=\"none\" stroke-width=\"1.2\">\n";
    std::unordered_set<std::string> placed;  // one diamond per place, as for the marks
    for (size_t k = 0; k < report_.groups.size(); ++k) {
      const NodeRoofline& g = report_.groups[k];
      if (!g.launches || g.flops <= 0 || g.predicted_us <= 0 || !report_.fusion) continue;
      const FusedGroup& fg = report_.fusion->groups[k];
      const double gx = g.intensity > 0 ? px(g.intensity) : right_, gy = py(g.flops / (g.predicted_us * 1e-6));
      ++drawn;
      if (!placed.insert(fmt::format("{:.0f},{:.0f},{}", gx, gy, bound_name(g.bound))).second) continue;
      s_ += fmt::format("<path class=\"group {}\" d=\"M{:.1f},{:.1f} l5,5 l-5,5 l-5,-5 z\" stroke=\"{}\"><title>{}</title></path>\n",
                        bound_name(g.bound), gx, gy - 5, bound_colour(g.bound),
                        xml_escape(fmt::format("kernel #{} {} ({} nodes from {}): {}-bound, {:.3g} us deployed; {:.4g} FLOP, {:.4g} bytes",
                                               fg.id, fg.label, fg.members.size(), analysis_.nodes[fg.members.front()].node->name,
                                               bound_name(g.bound), g.predicted_us, g.flops, g.bytes)));
    }
    s_ += "</g>\n";
    return drawn;
  }

  // Data movement (no FLOPs): one square per node in a strip under the axis, in graph order.
  void draw_strip() {
    const double strip_y = bottom_ + 62;
    s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#333\">0-FLOP nodes (data movement): {}</text>\n", kLeft, strip_y - 8,
                      movers_.size());
    s_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#f7f7f7\" stroke=\"#ddd\"/>\n<g>\n", kLeft, strip_y, right_ - kLeft);
    std::unordered_set<std::string> placed;  // thousands of movers share each pixel column
    for (size_t k = 0; k < movers_.size(); ++k) {
      const size_t i = movers_[k];
      const double cx = kLeft + 6 + (right_ - kLeft - 12) * (movers_.size() == 1 ? 0.5 : static_cast<double>(k) / (movers_.size() - 1));
      if (!rank_[i] && !placed.insert(fmt::format("{:.0f},{}", cx, node_colour(i))).second) continue;
      s_ += fmt::format("<rect class=\"node {}\" x=\"{:.1f}\" y=\"{}\" width=\"6\" height=\"12\" fill=\"{}\" fill-opacity=\"0.75\"><title>{}</title></rect>\n",
                        bound_name(report_.nodes[i].bound), cx - 3, strip_y + 5, node_colour(i), tooltip(i));
      if (rank_[i])
        s_ += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" font-weight=\"bold\">{}</text>\n", cx - 3, strip_y + 36, rank_[i]);
    }
    s_ += "</g>\n";
  }

  // Legend: bound colours, then the numbered heaviest nodes.
  void draw_legend(size_t measured_marks, size_t group_marks) {
    const double lx = right_ + 24;
    double ly = kTop + 4;
    s_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">compute-bound ({})</text>\n", lx + 6, ly,
                      kComputeColour, lx + 18, ly + 4, report_.totals.compute_bound);
    ly += 20;
    s_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">memory-bound ({})</text>\n", lx + 6, ly,
                      kMemoryColour, lx + 18, ly + 4, report_.totals.memory_bound);
    ly += 20;
    s_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">overhead-bound ({})</text>\n", lx + 6, ly,
                      kOverheadColour, lx + 18, ly + 4, report_.totals.overhead_bound);
    ly += 18;
    s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">mark area ~ share of predicted time</text>\n", lx, ly + 4);
    if (group_marks) {
      ly += 18;
      s_ += fmt::format("<path d=\"M{},{} l5,5 l-5,5 l-5,-5 z\" fill=\"none\" stroke=\"{}\"/><text x=\"{}\" y=\"{}\" fill=\"#555\">deployed "
                        "kernel ({} fused groups)</text>\n",
                        lx + 6, ly - 5, kGroupColour, lx + 18, ly + 4, group_marks);
    }
    if (measured_marks) {
      ly += 18;
      s_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.4\"/><text x=\"{}\" y=\"{}\" "
                        "fill=\"#555\">measured ({} nodes)</text>\n",
                        lx + 6, ly, lx + 18, ly + 4, measured_marks);
    }
    ly += 30;
    s_ += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Heaviest nodes (predicted time)</text>\n", lx, ly);
    ly += 16;
    s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" font-size=\"11\">number colour = bound</text>\n", lx, ly);
    for (size_t i : order_) {
      if (!rank_[i]) continue;
      ly += 18;
      const NodeRoofline& n = report_.nodes[i];
      s_ += fmt::format("<text x=\"{}\" y=\"{}\"><tspan font-weight=\"bold\" fill=\"{}\">{}.</tspan> {} <tspan fill=\"#555\">{:.3g} us, "
                        "{:.1f}%</tspan><title>{}</title></text>\n",
                        lx, ly, node_colour(i), rank_[i], xml_escape(shorten_tail(analysis_.nodes[i].node->name, 26)), n.predicted_us,
                        n.share * 100, tooltip(i));
    }
    ly += 30;
    s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">as written {:.3g} ms over {} kernels</text>\n", lx, ly,
                      report_.totals.predicted_latency_ms, report_.totals.launches);
    if (report_.fusion) {
      ly += 18;
      s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">deployed {:.3g} ms over {} kernels</text>\n", lx, ly,
                        report_.deployed.predicted_latency_ms, report_.deployed.launches);
    }
    if (report_.totals.uncosted)
      s_ += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#a00\">{} uncosted nodes not shown</text>\n", lx, ly + 18, report_.totals.uncosted);
  }
};

}  // namespace

std::string render_roofline_svg(const RooflineReport& report, const Analysis& analysis, const RooflineSvgOptions& options) {
  return RooflinePlot(report, analysis, options).render();
}

RooflineSvgAxes roofline_svg_axes(const RooflineReport& report, const Analysis& analysis, const RooflineSvgOptions& options) {
  return RooflinePlot(report, analysis, options).axes();
}

}  // namespace modelcost
