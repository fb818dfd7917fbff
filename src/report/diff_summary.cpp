#include "report/diff_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace modelcost {
namespace {

const ReportSection* find_section(const Report& report, const std::string& name) {
  for (const auto& section : report.sections)
    if (section.name == name && section.json) return &section;
  return nullptr;
}

// Time totals (every predicted latency, per device too) and the deployed kernel count.
std::vector<WholeModelFigure> total_figures(const Report& report) {
  std::vector<WholeModelFigure> figures;
  for (const auto& total : report.totals) {
    const bool latency = total.name.rfind("predicted_latency", 0) == 0 || total.name.rfind("measured", 0) == 0;
    if (!total.value || !(latency || total.name == "kernels_deployed")) continue;
    const CellValue v = total.value(*report.analysis);
    if (v.type != CellValue::Type::kNumber) continue;
    figures.push_back({total.name, total.title, latency ? ColumnKind::kTime : ColumnKind::kCount, v.number, 0});
  }
  return figures;
}

// The plan's rows on every device: latency (ms) and throughput per batch.
std::vector<WholeModelFigure> plan_figures(const Report& report) {
  std::vector<WholeModelFigure> figures;
  const ReportSection* plans = find_section(report, "plans");
  if (!plans) plans = find_section(report, "plan");
  if (!plans) return figures;
  Json all = plans->json();
  if (!all.is_array()) all = Json::array({all});
  for (const Json& plan : all) {
    const std::string device = plan.value("device", "");
    for (const Json& row : plan.value("rows", Json::array())) {
      const int64_t batch = row.value("batch", int64_t{0});
      const std::string at = fmt::format("@{}@{}", device, batch);
      figures.push_back({"plan_latency_ms" + at, fmt::format("latency at batch {} on {} (ms)", batch, device), ColumnKind::kTime,
                         row.value("latency_ms", 0.0), 0});
      figures.push_back({"plan_throughput_per_s" + at, fmt::format("throughput/s at batch {} on {}", batch, device),
                         ColumnKind::kCount, row.value("throughput_per_s", 0.0), 0});
    }
  }
  return figures;
}

std::vector<WholeModelFigure> figures_of(const Report& report) {
  std::vector<WholeModelFigure> figures = total_figures(report);
  for (auto& f : plan_figures(report)) figures.push_back(std::move(f));
  return figures;
}

}  // namespace

std::string report_view(const Report& report) {
  const ReportSection* hardware = find_section(report, "hardware");
  return hardware ? hardware->json().value("view", "") : "";
}

std::vector<WholeModelFigure> whole_model_figures(const Report& a, const Report& b) {
  std::map<std::string, double> in_b;
  for (const auto& f : figures_of(b)) in_b[f.name] = f.a;
  std::vector<WholeModelFigure> both;
  for (auto& f : figures_of(a)) {
    auto it = in_b.find(f.name);
    if (it == in_b.end()) continue;
    f.b = it->second;
    both.push_back(std::move(f));
  }
  // The run's own view first: its latency is the headline.
  if (report_view(a) == "deployed")
    std::stable_partition(both.begin(), both.end(), [](const WholeModelFigure& f) {
      return f.name.rfind("predicted_latency_deployed_ms", 0) == 0;
    });
  return both;
}

}  // namespace modelcost
