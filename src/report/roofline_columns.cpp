#include "report/roofline_columns.h"

#include <fmt/format.h>

#include <memory>

#include "report/group_columns.h"
#include "report/number_format.h"
#include "report/text_table.h"

namespace modelcost {
namespace {

// First column left-aligned (labels), the rest right-aligned (figures).
TextTable table_with(const std::vector<std::string>& titles) {
  TextTable t;
  for (size_t i = 0; i < titles.size(); ++i)
    t.add_column(titles[i], i == 0 ? TextTable::Align::kLeft : TextTable::Align::kRight);
  return t;
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json device_json(const Device& d, const RooflineReport& r, const std::string& resolution) {
  Json peaks = Json::object();
  for (const auto& roof : r.roofs)
    peaks[std::string(math_path_name(roof.path)) + "_" + roof.dtype + "_tflops"] = roof.peak_flops / 1e12;
  return Json{{"id", d.id},
              {"name", d.name},
              {"resolved_from", resolution.empty() ? Json(nullptr) : Json(resolution)},
              {"vendor", d.vendor},
              {"architecture", d.architecture},
              {"memory_gb", d.memory_gb},
              {"memory_bandwidth_gbps", d.memory_bandwidth_gbps},
              {"launch_overhead_us", d.launch_overhead_us},
              {"view", r.view},
              {"ceilings", r.ceilings.achievable ? "achievable" : "datasheet"},
              {"bandwidth_gbps_used", r.ceilings.bandwidth_bytes_per_s / 1e9},
              {"kernel_overhead_us", r.ceilings.overhead_us},
              {"kernel_gap_us", r.ceilings.gap_us},
              {"dtype", r.dtype},
              {"peaks_used", peaks},
              {"origin", d.origin},
              {"verdict", r.verdict}};
}

Json plan_row_json(const PlanRow& row) {
  return Json{{"batch", row.batch},
              {"latency_ms", row.latency_ms},
              {"throughput_per_s", row.throughput_per_s},
              {"weights_bytes", row.weights_bytes},
              {"peak_activation_bytes", row.peak_activation_bytes},
              {"workspace_bytes", row.workspace_bytes},
              {"memory_bytes", row.memory_bytes},
              {"fits", row.fits},
              {"meets_slo", row.meets_slo},
              {"cost_per_million_usd", optional_json(row.cost_per_million_usd)}};
}

// With --dtype the roofline re-costs bytes as if every float tensor had that type; the report's
// byte and intensity figures follow, so they agree with the predicted times (and with achieved
// bandwidth from a measurement at that dtype). Per node: scale = recast bytes / analysed bytes.
void show_bytes_at_roofline_dtype(Report& report, const RooflineReport& r) {
  const Analysis& a = *report.analysis;
  auto scales = std::make_shared<std::vector<double>>(a.nodes.size(), 1.0);
  bool recast = false;
  double read = 0, written = 0;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeCost& c = a.nodes[i].cost;
    if (c.bytes() > 0 && r.nodes[i].costed) (*scales)[i] = r.nodes[i].bytes / c.bytes();
    recast = recast || (*scales)[i] != 1.0;
    read += c.bytes_read * (*scales)[i];
    written += c.bytes_written * (*scales)[i];
  }
  if (!recast) return;
  for (auto& column : report.columns) {
    const bool is_bytes = column.name == "bytes_read" || column.name == "bytes_written" || column.name == "bytes";
    if (!is_bytes && column.name != "arithmetic_intensity") continue;
    NodeCellFn original = column.value;
    column.value = [original, scales, is_bytes](const NodeAnalysis& node, size_t row) {
      CellValue v = original(node, row);
      const double s = (*scales)[row];
      if (v.type == CellValue::Type::kNumber && s > 0) v.number = is_bytes ? v.number * s : v.number / s;
      return v;
    };
  }
  for (auto& total : report.totals) {
    if (total.name == "bytes_read") total.value = [read](const Analysis&) { return CellValue::of_number(read); };
    if (total.name == "bytes_written") total.value = [written](const Analysis&) { return CellValue::of_number(written); };
    if (total.name == "arithmetic_intensity")
      total.value = [read, written](const Analysis& an) {
        return CellValue::of_number(read + written > 0 ? an.totals.flops / (read + written) : 0.0);
      };
  }
}

}  // namespace

void add_roofline(Report& report, const RooflineReport& roofline, const std::string& resolution) {
  const RooflineReport* r = &roofline;
  show_bytes_at_roofline_dtype(report, roofline);
  report.add_column_after("arithmetic_intensity",
                          {"bound", "bound", "", ColumnKind::kText, kSinkAll, false,
                           [r](const NodeAnalysis&, size_t row) { return CellValue::of_text(bound_name(r->nodes[row].bound)); },
                           nullptr});
  report.add_column_after("bound",
                          {"predicted_us", "pred us", "us", ColumnKind::kTime, kSinkAll, true,
                           [r](const NodeAnalysis&, size_t row) { return CellValue::of_number(r->nodes[row].predicted_us); },
                           nullptr});
  report.add_column_after("predicted_us",
                          {"share", "share", "1", ColumnKind::kShare, kSinkAll, false,
                           [r](const NodeAnalysis&, size_t row) { return CellValue::of_number(r->nodes[row].share); },
                           nullptr});
  report.add_column_after("share",
                          {"peak", "peak", "", ColumnKind::kText, kSinkFiles, false,
                           [r](const NodeAnalysis&, size_t row) {
                             const NodeRoofline& n = r->nodes[row];
                             return n.peak_flops > 0 ? CellValue::of_text(std::string(math_path_name(n.path)) + "." + n.peak_dtype)
                                                     : CellValue::empty();
                           },
                           nullptr});
  report.totals.push_back({"predicted_latency_ms", "predicted latency as written (ms)", "ms", ColumnKind::kTime, kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(r->totals.predicted_latency_ms); }});
  report.totals.push_back({"compute_bound_nodes", "compute-bound nodes", "1", ColumnKind::kInteger, kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(double(r->totals.compute_bound)); }});
  report.totals.push_back({"memory_bound_nodes", "memory-bound nodes", "1", ColumnKind::kInteger, kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(double(r->totals.memory_bound)); }});
  report.totals.push_back({"overhead_bound_nodes", "overhead-bound nodes", "1", ColumnKind::kInteger, kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(double(r->totals.overhead_bound)); }});
  report.rank_by = "predicted_us";
  const Device* device = roofline.device;
  report.sections.push_back({"hardware", [=] { return device_json(*device, *r, resolution); },
                             [=](std::ostream& out) {
                               out << "\n";
                               if (!resolution.empty()) out << resolution << "\n";
                               out << r->verdict << "\n";
                             }});
  if (roofline.fusion) add_groups(report, roofline);
}

void add_plan(Report& report, const CapacityPlan& plan) {
  report.sections.push_back({"plan",
                             [plan] {
                               Json rows = Json::array();
                               for (const auto& row : plan.rows) rows.push_back(plan_row_json(row));
                               return Json{{"device", plan.device ? plan.device->id : ""},
                                           {"dtype", plan.dtype},
                                           {"rows", rows},
                                           {"max_batch_fits", plan.max_batch_fits ? Json(*plan.max_batch_fits) : Json(nullptr)},
                                           {"max_batch_capped", plan.max_batch_capped},
                                           {"max_batch", plan.max_batch_row ? plan_row_json(*plan.max_batch_row) : Json(nullptr)},
                                           {"target_qps", optional_json(plan.target_qps)},
                                           {"latency_slo_ms", optional_json(plan.latency_slo_ms)},
                                           {"best", plan.best ? plan_row_json(*plan.best) : Json(nullptr)},
                                           {"devices_needed", plan.devices_needed ? Json(*plan.devices_needed) : Json(nullptr)},
                                           {"notes", plan.notes}};
                             },
                             [plan](std::ostream& out) {
                               out << "\nCapacity plan on " << (plan.device ? plan.device->name : "?") << " (" << plan.dtype << ")\n";
                               TextTable t = table_with({"batch", "latency", "throughput/s", "weights", "peak act.", "memory", "fits", "$/1M inf."});
                               auto add = [&](const PlanRow& row, const std::string& label) {
                                 t.add_row({label, fmt::format("{:.3g} ms", row.latency_ms), fmt::format("{:.4g}", row.throughput_per_s),
                                            human_bytes(row.weights_bytes), human_bytes(row.peak_activation_bytes),
                                            human_bytes(row.memory_bytes), row.fits ? "yes" : "no",
                                            row.cost_per_million_usd ? fmt::format("{:.3g}", *row.cost_per_million_usd) : "-"});
                               };
                               for (const auto& row : plan.rows) add(row, std::to_string(row.batch));
                               if (plan.max_batch_row) add(*plan.max_batch_row, std::to_string(plan.max_batch_row->batch) + " (max)");
                               t.print(out);
                               if (plan.max_batch_fits)
                                 out << "largest batch that fits: " << *plan.max_batch_fits << (plan.max_batch_capped ? " (search capped)" : "") << "\n";
                               if (plan.best && plan.devices_needed)
                                 out << fmt::format("for {:.4g} inferences/s{}: batch {} on {} device(s)\n", *plan.target_qps,
                                                    plan.latency_slo_ms ? fmt::format(" within {:.4g} ms", *plan.latency_slo_ms) : "",
                                                    plan.best->batch, *plan.devices_needed);
                               for (const auto& note : plan.notes) out << "note: " << note << "\n";
                             }});
}

void add_device_comparison(Report& report, const std::vector<DeviceComparisonRow>& rows, const std::string& dtype) {
  report.sections.push_back({"comparison",
                             [rows, dtype] {
                               Json out = Json::array();
                               for (const auto& r : rows)
                                 out.push_back(Json{{"device", r.device->id},
                                                    {"name", r.device->name},
                                                    {"dtype", dtype},
                                                    {"latency_ms", r.latency_ms},
                                                    {"throughput_per_s", r.throughput_per_s},
                                                    {"compute_bound_nodes", r.compute_bound},
                                                    {"memory_bound_nodes", r.memory_bound},
                                                    {"memory_bytes", r.memory_bytes},
                                                    {"fits", r.fits},
                                                    {"cost_per_million_usd", optional_json(r.cost_per_million_usd)}});
                               return out;
                             },
                             [rows](std::ostream& out) {
                               out << "\nDevices side by side\n";
                               TextTable t = table_with({"device", "latency", "throughput/s", "compute-bound", "memory-bound", "memory", "fits", "$/1M inf."});
                               for (const auto& r : rows)
                                 t.add_row({r.device->name, fmt::format("{:.3g} ms", r.latency_ms), fmt::format("{:.4g}", r.throughput_per_s),
                                            std::to_string(r.compute_bound), std::to_string(r.memory_bound), human_bytes(r.memory_bytes),
                                            r.fits ? "yes" : "no", r.cost_per_million_usd ? fmt::format("{:.3g}", *r.cost_per_million_usd) : "-"});
                               t.print(out);
                             }});
}

}  // namespace modelcost
