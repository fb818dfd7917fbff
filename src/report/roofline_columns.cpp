#include "report/roofline_columns.h"

#include <fmt/format.h>

#include <memory>

#include "report/json_text.h"
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
              {"calibration", r.ceilings.calibration},
              {"bandwidth_gbps_used", r.ceilings.bandwidth_bytes_per_s / 1e9},
              {"kernel_overhead_us", r.ceilings.overhead_us},
              {"kernel_gap_us", r.ceilings.gap_us},
              {"kernel_curves", r.ceilings.kernel_curves},
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
// byte, intensity and output dtype figures follow, so they agree with the predicted times (and
// with achieved bandwidth from a measurement at that dtype). Bytes stay whole numbers, and the
// totals are sums of the same per-node figures, so CSV column sums equal the JSON totals.
}  // namespace

void show_figures_at_dtype(Report& report, const std::string& recast) {
  if (recast.empty()) return;
  const Analysis& a = *report.analysis;
  auto bytes = std::make_shared<std::vector<RecastBytes>>(a.nodes.size());
  double read = 0, written = 0;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    (*bytes)[i] = a.nodes[i].cost.known ? recast_node_bytes_split(a.nodes[i], recast)
                                    : RecastBytes{a.nodes[i].cost.bytes_read, a.nodes[i].cost.bytes_written};
    read += (*bytes)[i].read;
    written += (*bytes)[i].written;
  }
  auto number = [](double v) { return CellValue::of_number(v); };
  for (auto& column : report.columns) {
    if (column.name == "bytes_read") column.value = [=](const NodeAnalysis&, size_t row) { return number((*bytes)[row].read); };
    if (column.name == "bytes_written") column.value = [=](const NodeAnalysis&, size_t row) { return number((*bytes)[row].written); };
    if (column.name == "bytes")
      column.value = [=](const NodeAnalysis&, size_t row) { return number((*bytes)[row].read + (*bytes)[row].written); };
    if (column.name == "arithmetic_intensity")
      column.value = [=](const NodeAnalysis& node, size_t row) {
        const double moved = (*bytes)[row].read + (*bytes)[row].written;
        return number(moved > 0 ? node.cost.flops / moved : 0.0);
      };
    if (column.name == "output_dtypes")
      column.value = [=](const NodeAnalysis& node, size_t) { return CellValue::of_text(output_dtypes_text(node, recast)); };
    if (column.name == "outputs")
      column.json_text = [=](const NodeAnalysis& node, size_t, JsonText& json) { write_outputs_json(node, recast, json); };
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

void add_roofline(Report& report, const RooflineReport& roofline, const std::string& resolution) {
  auto r = std::make_shared<const RooflineReport>(roofline);  // the columns keep a copy
  show_figures_at_dtype(report, roofline.recast_dtype);
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

namespace {

Json plan_json(const CapacityPlan& plan) {
  Json rows = Json::array();
  for (const auto& row : plan.rows) rows.push_back(plan_row_json(row));
  return Json{{"device", plan.device ? plan.device->id : ""},
              {"dtype", plan.dtype},
              {"swept", plan.swept},
              {"rows", rows},
              {"max_batch_fits", plan.max_batch_fits ? Json(*plan.max_batch_fits) : Json(nullptr)},
              {"max_batch_capped", plan.max_batch_capped},
              {"max_batch", plan.max_batch_row ? plan_row_json(*plan.max_batch_row) : Json(nullptr)},
              {"target_qps", optional_json(plan.target_qps)},
              {"latency_slo_ms", optional_json(plan.latency_slo_ms)},
              {"best", plan.best ? plan_row_json(*plan.best) : Json(nullptr)},
              {"devices_needed", plan.devices_needed ? Json(*plan.devices_needed) : Json(nullptr)},
              {"notes", plan.notes}};
}

std::string milliseconds(double ms) { return three_digits(ms) + " ms"; }
std::string dollars(const std::optional<double>& usd) { return usd ? three_digits(*usd) : "-"; }

// One table for every device's plan: a device column when there are several, a meets-SLO column
// with an SLO.
void print_plans(const std::vector<CapacityPlan>& plans, std::ostream& out) {
  const CapacityPlan& first = plans.front();
  const bool several = plans.size() > 1;
  out << "\nCapacity plan on " << (several ? std::to_string(plans.size()) + " devices" : first.device ? first.device->name : "?")
      << " (" << first.dtype << (first.swept ? ", batches swept" : "") << ")\n";
  std::vector<std::string> titles = {"batch", "latency", "throughput/s", "weights", "peak act.", "memory", "fits"};
  if (first.latency_slo_ms) titles.push_back("meets SLO");
  titles.push_back("$/1M inf.");
  if (several) titles.insert(titles.begin(), "device");
  TextTable t = table_with(titles);
  for (const auto& plan : plans) {
    auto add = [&](const PlanRow& row, const std::string& label) {
      std::vector<std::string> cells = {label, milliseconds(row.latency_ms), human_count(row.throughput_per_s),
                                        human_bytes(row.weights_bytes), human_bytes(row.peak_activation_bytes),
                                        human_bytes(row.memory_bytes), row.fits ? "yes" : "no"};
      if (plan.latency_slo_ms) cells.push_back(row.meets_slo ? "yes" : "no");
      cells.push_back(dollars(row.cost_per_million_usd));
      if (several) cells.insert(cells.begin(), plan.device ? plan.device->id : "?");
      t.add_row(std::move(cells));
    };
    for (const auto& row : plan.rows) add(row, std::to_string(row.batch));
    if (plan.max_batch_row) add(*plan.max_batch_row, std::to_string(plan.max_batch_row->batch) + " (max)");
  }
  t.print(out);
  for (const auto& plan : plans) {
    const std::string on = several && plan.device ? " on " + plan.device->id : "";
    if (plan.max_batch_fits)
      out << "largest batch that fits" << on << ": " << *plan.max_batch_fits << (plan.max_batch_capped ? " (search capped)" : "") << "\n";
    if (plan.best && plan.devices_needed)
      out << fmt::format("for {} inferences/s{}{}: batch {} on {} device(s)\n", human_count(*plan.target_qps),
                         plan.latency_slo_ms ? " within " + milliseconds(*plan.latency_slo_ms) : "", on, plan.best->batch,
                         *plan.devices_needed);
    else if (plan.best && plan.latency_slo_ms)
      out << fmt::format("best batch within {}{}: {} ({}/s)\n", milliseconds(*plan.latency_slo_ms), on, plan.best->batch,
                         human_count(plan.best->throughput_per_s));
    for (const auto& note : plan.notes) out << "note" << on << ": " << note << "\n";
  }
}

}  // namespace

void add_plan(Report& report, const std::vector<CapacityPlan>& plans) {
  if (plans.empty()) return;
  report.sections.push_back({"plan", [plans] { return plan_json(plans.front()); }, [plans](std::ostream& out) { print_plans(plans, out); }});
  if (plans.size() > 1)
    report.sections.push_back({"plans",
                               [plans] {
                                 Json all = Json::array();
                                 for (const auto& plan : plans) all.push_back(plan_json(plan));
                                 return all;
                               },
                               nullptr});
}

void add_device_columns(Report& report, const std::vector<const RooflineReport*>& others) {
  std::string after = "peak";
  for (const RooflineReport* r : others) {
    const std::string id = r->device->id;
    ReportColumn bound{"bound@" + id, "bound " + id, "", ColumnKind::kText, kSinkFiles, false,
                       [r](const NodeAnalysis&, size_t row) { return CellValue::of_text(bound_name(r->nodes[row].bound)); }, nullptr};
    ReportColumn predicted{"predicted_us@" + id, "us " + id, "us", ColumnKind::kTime, kSinkAll, true,
                           [r](const NodeAnalysis&, size_t row) { return CellValue::of_number(r->nodes[row].predicted_us); }, nullptr};
    report.add_column_after(after, bound);
    report.add_column_after(bound.name, predicted);
    after = predicted.name;
    report.totals.push_back({"predicted_latency_ms@" + id, "predicted latency as written on " + id + " (ms)", "ms",
                             ColumnKind::kTime, kSinkTable | kSinkJson,
                             [r](const Analysis&) { return CellValue::of_number(r->totals.predicted_latency_ms); }});
    if (r->fusion)
      report.totals.push_back({"predicted_latency_deployed_ms@" + id, "predicted latency deployed on " + id + " (ms)", "ms",
                               ColumnKind::kTime, kSinkTable | kSinkJson,
                               [r](const Analysis&) { return CellValue::of_number(r->deployed.predicted_latency_ms); }});
  }
}

void add_device_comparison(Report& report, const std::vector<DeviceComparisonRow>& rows, const std::string& dtype,
                           const std::string& view) {
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
                             [rows, dtype, view](std::ostream& out) {
                               out << "\nDevices side by side (" << view << ", " << dtype << ")\n";
                               TextTable t = table_with({"device", "latency", "throughput/s", "compute-bound", "memory-bound", "memory", "fits", "$/1M inf."});
                               for (const auto& r : rows)
                                 t.add_row({r.device->name, milliseconds(r.latency_ms), human_count(r.throughput_per_s),
                                            std::to_string(r.compute_bound), std::to_string(r.memory_bound), human_bytes(r.memory_bytes),
                                            r.fits ? "yes" : "no", dollars(r.cost_per_million_usd)});
                               t.print(out);
                             }});
}

}  // namespace modelcost
