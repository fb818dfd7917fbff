#include "report/measured_columns.h"

#include <fmt/format.h>

#include <algorithm>

namespace modelcost {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ";") + i;
  return s;
}

// The whole-model figures the "measurement" section prints, with the per-node tallies.
struct MeasuredRun {
  DeviceInfo device;
  ModelMeasurement whole;
  std::shared_ptr<const RooflineReport> roofline;  // may be null
  size_t measured_nodes = 0, failed = 0, reused = 0;
  double sum_us = 0;  // of the node medians
};

MeasuredRun tally(const std::vector<NodeMeasurement>& nodes) {
  MeasuredRun run;
  for (const auto& n : nodes) {
    if (!n.same_as.empty() && n.measured && !n.zero_cost) ++run.reused;
    if (n.measured) ++run.measured_nodes;
    else if (!n.zero_cost) ++run.failed;
    if (n.measured) run.sum_us += n.median_us;
  }
  return run;
}

// measured_us, its spread, achieved rates, efficiency, kernels and implementation, after the cost columns.
void add_measured_columns(Report& report, std::shared_ptr<const std::vector<NodeMeasurement>> m,
                          std::shared_ptr<const RooflineReport> roofline) {
  auto measured = [m](size_t row) -> const NodeMeasurement& { return (*m)[row]; };
  const std::string after = report.find_column("share") ? "share" : "arithmetic_intensity";
  report.add_column_after(after, {"measured_us", "meas us", "us", ColumnKind::kTime, kSinkAll, true,
                                  [measured](const NodeAnalysis&, size_t row) {
                                    const auto& n = measured(row);
                                    return n.measured || n.zero_cost ? CellValue::of_number(n.median_us) : CellValue::empty();
                                  },
                                  nullptr});
  report.add_column_after("measured_us", {"measured_min_us", "min us", "us", ColumnKind::kTime, kSinkFiles, false,
                                          [measured](const NodeAnalysis&, size_t row) {
                                            const auto& n = measured(row);
                                            return n.measured ? CellValue::of_number(n.min_us) : CellValue::empty();
                                          },
                                          nullptr});
  report.add_column_after("measured_min_us", {"measured_rel_stddev", "spread", "1", ColumnKind::kShare, kSinkFiles, false,
                                              [measured](const NodeAnalysis&, size_t row) {
                                                const auto& n = measured(row);
                                                return n.measured ? CellValue::of_number(n.rel_stddev) : CellValue::empty();
                                              },
                                              nullptr});
  report.add_column_after("measured_rel_stddev", {"achieved_tflops", "TFLOP/s", "TFLOP/s", ColumnKind::kRatio, kSinkAll, false,
                                                  [measured](const NodeAnalysis& node, size_t row) {
                                                    const auto& n = measured(row);
                                                    return n.measured && n.median_us > 0 ? CellValue::of_number(node.cost.flops / (n.median_us * 1e6))
                                                                                         : CellValue::empty();
                                                  },
                                                  nullptr});
  report.add_column_after("achieved_tflops", {"achieved_gbps", "GB/s", "GB/s", ColumnKind::kRatio, kSinkAll, false,
                                              [measured, roofline](const NodeAnalysis& node, size_t row) {
                                                const auto& n = measured(row);
                                                // Bytes at the measured dtype: the roofline's recast figure when there is one.
                                                const double bytes = roofline ? roofline->nodes[row].bytes : node.cost.bytes();
                                                return n.measured && n.median_us > 0 ? CellValue::of_number(bytes / (n.median_us * 1e3))
                                                                                     : CellValue::empty();
                                              },
                                              nullptr});
  if (roofline)
    report.add_column_after("achieved_gbps", {"efficiency", "eff.", "1", ColumnKind::kRatio, kSinkAll, false,
                                              [measured, roofline](const NodeAnalysis&, size_t row) {
                                                const auto& n = measured(row);
                                                const double predicted = roofline->nodes[row].predicted_us;
                                                return n.measured && n.median_us > 0 && predicted > 0
                                                           ? CellValue::of_number(predicted / n.median_us)
                                                           : CellValue::empty();
                                              },
                                              nullptr});
  report.add_column_after(roofline ? "efficiency" : "achieved_gbps",
                          {"kernels", "kernels", "", ColumnKind::kText, kSinkFiles, false,
                           [measured](const NodeAnalysis&, size_t row) {
                             const auto& n = measured(row);
                             return CellValue::of_text(n.measured ? joined(n.kernels) : n.zero_cost ? "" : "not measured: " + n.reason);
                           },
                           nullptr});
  report.add_column_after("kernels", {"implementation", "implementation", "", ColumnKind::kText, kSinkFiles, false,
                                       [measured](const NodeAnalysis&, size_t row) {
                                         const auto& n = measured(row);
                                         return CellValue::of_text(n.same_as.empty() ? n.implementation
                                                                                     : n.implementation + " (figure of identical node " + n.same_as + ")");
                                       },
                                       nullptr});
}

Json measurement_json(const MeasuredRun& run) {
  const ModelMeasurement& whole = run.whole;
  Json j{{"device", run.device.name},
         {"driver", run.device.driver},
         {"nodes_measured", run.measured_nodes},
         {"nodes_not_measured", run.failed},
         {"nodes_reusing_an_identical_nodes_figure", run.reused},
         {"sum_of_node_medians_ms", run.sum_us / 1e3},
         {"model_measured", whole.measured},
         {"model_latency_ms", whole.measured ? Json(whole.median_us / 1e3) : Json(nullptr)},
         {"model_rel_stddev", whole.measured ? Json(whole.rel_stddev) : Json(nullptr)},
         {"model_method", whole.method},
         {"model_kernels", whole.has_kernel_breakdown ? Json(whole.kernels_per_run) : Json(nullptr)},
         {"model_kernel_busy_ms", whole.has_kernel_breakdown ? Json(whole.kernel_busy_us / 1e3) : Json(nullptr)},
         {"model_idle_ms", whole.has_kernel_breakdown ? Json(std::max(0.0, whole.median_us - whole.kernel_busy_us) / 1e3) : Json(nullptr)},
         {"model_reason", whole.reason}};
  if (run.roofline) {
    const double predicted_ms = run.roofline->totals.predicted_latency_ms;
    j["predicted_latency_ms"] = predicted_ms;
    j["prediction_error"] = whole.measured && whole.median_us > 0 ? Json(predicted_ms / (whole.median_us / 1e3) - 1) : Json(nullptr);
  }
  return j;
}

void print_measurement(const MeasuredRun& run, std::ostream& out) {
  const ModelMeasurement& whole = run.whole;
  const double sum = run.sum_us;
  out << fmt::format("\nMeasured on {} ({}): {} nodes measured, {} not measured\n", run.device.name, run.device.driver,
                     run.measured_nodes, run.failed);
  out << fmt::format("  sum of per-node medians  {:.4g} ms\n", sum / 1e3);
  if (run.reused > 0)
    out << fmt::format("  {} nodes identical to an earlier one (op, attributes, shapes, dtypes) reuse its figure\n", run.reused);
  if (whole.measured) {
    out << fmt::format("  whole model ({})  {:.4g} ms (spread {:.1f}%); sum / whole = {:.2f}\n", whole.method, whole.median_us / 1e3,
                       100 * whole.rel_stddev, whole.median_us > 0 ? sum / whole.median_us : 0.0);
    if (whole.has_kernel_breakdown)
      out << fmt::format("    in it: {} kernels busy {:.4g} ms (sum / busy = {:.2f}), GPU idle between and before them {:.4g} ms\n",
                         whole.kernels_per_run, whole.kernel_busy_us / 1e3,
                         whole.kernel_busy_us > 0 ? sum / whole.kernel_busy_us : 0.0,
                         std::max(0.0, whole.median_us - whole.kernel_busy_us) / 1e3);
  } else if (!whole.reason.empty()) {
    out << "  whole model not run: " << whole.reason << "\n";
  }
  if (run.roofline && whole.measured && whole.median_us > 0) {
    const double predicted_ms = run.roofline->totals.predicted_latency_ms;
    out << fmt::format("  roofline prediction  {:.4g} ms, {:+.0f}% against the whole-model measurement\n", predicted_ms,
                       100 * (predicted_ms / (whole.median_us / 1e3) - 1));
  }
}

}  // namespace

void add_measurements(Report& report, const std::vector<NodeMeasurement>& nodes, const ModelMeasurement& model,
                      const DeviceInfo& device, const RooflineReport* roofline_report) {
  // The columns and the section keep their own copies of what they print.
  MeasuredRun run = tally(nodes);
  run.device = device;
  run.whole = model;
  if (roofline_report) run.roofline = std::make_shared<const RooflineReport>(*roofline_report);
  add_measured_columns(report, std::make_shared<const std::vector<NodeMeasurement>>(nodes), run.roofline);
  report.rank_by = "measured_us";
  const double sum = run.sum_us;
  report.totals.push_back({"measured_sum_ms", "measured, sum of node medians (ms)", "ms", ColumnKind::kTime, kSinkTable | kSinkJson,
                           [sum](const Analysis&) { return CellValue::of_number(sum / 1e3); }});
  report.sections.push_back({"measurement", [run] { return measurement_json(run); },
                             [run](std::ostream& out) { print_measurement(run, out); }});
}

std::string counters_warning(const std::vector<NodeMeasurement>& nodes) {
  size_t with = 0, without = 0;
  std::string reason;
  for (const auto& n : nodes) {
    if (n.has_counters) ++with;
    else if (n.measured && !n.zero_cost) {
      ++without;
      if (reason.empty()) reason = n.counters_reason;
    }
  }
  if (without == 0) return "";
  if (reason.empty()) reason = "not collected by this backend";
  if (with == 0) return "counters unavailable: " + reason;
  return fmt::format("counters missing for {} of {} measured nodes: {}", without, with + without, reason);
}

void add_counter_columns(Report& report, const std::vector<NodeMeasurement>& nodes) {
  auto m = std::make_shared<const std::vector<NodeMeasurement>>(nodes);
  auto counted = [m](size_t row) -> const NodeMeasurement* {
    const auto& n = (*m)[row];
    return n.has_counters ? &n : nullptr;
  };
  const std::string after = report.find_column("implementation") ? "implementation"
                            : report.find_column("kernels")      ? "kernels"
                                                                 : "measured_us";
  report.add_column_after(after, {"dram_bytes", "DRAM bytes", "bytes", ColumnKind::kBytes, kSinkFiles, true,
                                  [counted](const NodeAnalysis&, size_t row) {
                                    const auto* n = counted(row);
                                    return n ? CellValue::of_number(n->dram_bytes_read + n->dram_bytes_written) : CellValue::empty();
                                  },
                                  nullptr});
  report.add_column_after("dram_bytes", {"executed_flops", "exec FLOPs", "1", ColumnKind::kCount, kSinkFiles, true,
                                         [counted](const NodeAnalysis&, size_t row) {
                                           const auto* n = counted(row);
                                           return n && n->has_executed_flops ? CellValue::of_number(n->executed_flops) : CellValue::empty();
                                         },
                                         nullptr});
  report.add_column_after("executed_flops", {"measured_intensity", "meas. FLOP/B", "flop/byte", ColumnKind::kRatio, kSinkFiles, false,
                                             [counted](const NodeAnalysis&, size_t row) {
                                               const auto* n = counted(row);
                                               // No DRAM traffic (all from L2, or a zero-cost node): no intensity.
                                               return n && n->has_executed_flops && n->dram_bytes_read + n->dram_bytes_written > 0
                                                          ? CellValue::of_number(n->measured_intensity)
                                                          : CellValue::empty();
                                             },
                                             nullptr});
  size_t with = 0;
  double bytes = 0, flops = 0;
  for (const auto& n : nodes) {
    if (!n.has_counters) continue;
    ++with;
    bytes += n.dram_bytes_read + n.dram_bytes_written;
    flops += n.executed_flops;
  }
  const std::string warning = counters_warning(nodes);
  report.sections.push_back({"counters",
                             [=] {
                               return Json{{"nodes_with_counters", with},
                                           {"dram_bytes", bytes},
                                           {"executed_flops", flops},
                                           {"warning", warning.empty() ? Json(nullptr) : Json(warning)}};
                             },
                             [=](std::ostream& out) {
                               if (with > 0)
                                 out << fmt::format("  counters: {} nodes, DRAM {:.4g} GB, executed {:.4g} GFLOP\n", with, bytes / 1e9,
                                                    flops / 1e9);
                               if (!warning.empty()) out << "  " << warning << "\n";
                             }});
}

}  // namespace modelcost
