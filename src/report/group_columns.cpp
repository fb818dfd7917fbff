#include "report/group_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/csv_writer.h"
#include "report/number_format.h"
#include "report/text_table.h"

namespace modelcost {
namespace {

std::string member_names(const Analysis& analysis, const FusedGroup& g, const char* separator) {
  std::string out;
  for (size_t m : g.members) out += (out.empty() ? "" : separator) + analysis.nodes[m].node->name;
  return out;
}

Json group_json(const Analysis& analysis, const FusedGroup& g, const NodeRoofline& r) {
  Json members = Json::array();
  for (size_t m : g.members) members.push_back(analysis.nodes[m].node->name);
  Json j{{"id", g.id},
         {"pattern", g.pattern},
         {"label", g.label},
         {"kernel_class", kernel_class_name(g.kernel.cls)},
         {"anchor", analysis.nodes[g.anchor].node->name},
         {"members", members},
         {"macs", g.macs},
         {"flops", r.launches ? r.flops : g.flops},
         {"bytes", r.launches ? r.bytes : g.bytes()},
         {"arithmetic_intensity", r.intensity},
         {"bound", bound_name(r.bound)},
         {"predicted_us", r.predicted_us},
         {"share", r.share}};
  if (g.kernel.k > 0) j["kernel_k"] = g.kernel.k;
  if (r.library_tail) j["library_tail"] = true;
  if (!g.apart_reason.empty()) j["apart_reason"] = g.apart_reason;
  return j;
}

// Kernels of pattern matches the runtime cannot run as one kernel, with the most common reasons.
void print_planned_apart(const FusionPlan& plan, std::ostream& out) {
  std::map<std::string, size_t> reasons;
  size_t apart = 0;
  for (const FusedGroup& g : plan.groups)
    if (!g.apart_reason.empty() && g.launches) {
      ++apart;
      ++reasons[g.apart_reason];
    }
  if (apart == 0) return;
  std::vector<std::pair<size_t, std::string>> common;
  for (const auto& [why, n] : reasons) common.emplace_back(n, why);
  std::sort(common.rbegin(), common.rend());
  out << fmt::format("{} kernels run apart: members of fusions the runtime cannot run as one kernel (apart_reason in --json)\n", apart);
  for (size_t i = 0; i < common.size() && i < 3; ++i) out << fmt::format("  {} x {}\n", common[i].first, common[i].second);
}

void print_heaviest(const Analysis& analysis, const RooflineReport& r, std::ostream& out) {
  std::vector<size_t> order;
  for (size_t k = 0; k < r.groups.size(); ++k)
    if (r.groups[k].launches) order.push_back(k);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.groups[a].predicted_us > r.groups[b].predicted_us; });
  if (order.size() > 10) order.resize(10);
  out << fmt::format("\nDeployed: {} kernels from {} nodes; predicted {:.3g} ms deployed, {:.3g} ms as written\n",
                     r.deployed.launches, analysis.nodes.size(), r.deployed.predicted_latency_ms, r.totals.predicted_latency_ms);
  print_planned_apart(*r.fusion, out);
  TextTable t;
  using A = TextTable::Align;
  t.add_column("group", A::kRight);
  t.add_column("kernel", A::kLeft, 32);
  t.add_column("class", A::kLeft);
  t.add_column("nodes", A::kRight);
  t.add_column("first node", A::kLeft, 40);
  t.add_column("bound", A::kLeft);
  t.add_column("pred us", A::kRight);
  t.add_column("share", A::kRight);
  for (size_t k : order) {
    const FusedGroup& g = r.fusion->groups[k];
    t.add_row({std::to_string(g.id), g.label, kernel_class_name(g.kernel.cls), std::to_string(g.members.size()), analysis.nodes[g.members.front()].node->name,
               bound_name(r.groups[k].bound), fmt::format("{:.3g}", r.groups[k].predicted_us),
               fmt::format("{:.1f}%", 100 * r.groups[k].share)});
  }
  t.print(out);
}

}  // namespace

void add_groups(Report& report, const RooflineReport& roofline) {
  auto r = std::make_shared<const RooflineReport>(roofline);  // the columns keep a copy
  report.add_column_after("share", {"group", "group", "1", ColumnKind::kInteger, kSinkFiles, false,
                                    [r](const NodeAnalysis&, size_t row) {
                                      const int g = r->fusion->group_of[row];
                                      return g < 0 ? CellValue::empty() : CellValue::of_number(g);
                                    },
                                    nullptr});
  report.totals.push_back({"predicted_latency_deployed_ms", "predicted latency deployed (ms)", "ms", ColumnKind::kTime,
                           kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(r->deployed.predicted_latency_ms); }});
  report.totals.push_back({"kernels_deployed", "kernels deployed", "1", ColumnKind::kInteger, kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(double(r->deployed.launches)); }});
  report.totals.push_back({"overhead_bound_kernels_deployed", "overhead-bound kernels deployed", "1", ColumnKind::kInteger,
                           kSinkTable | kSinkJson,
                           [r](const Analysis&) { return CellValue::of_number(double(r->deployed.overhead_bound)); }});
  std::shared_ptr<const Analysis> analysis = report.analysis;
  report.sections.push_back({"groups",
                             [r, analysis] {
                               Json out = Json::array();
                               for (size_t k = 0; k < r->groups.size(); ++k)
                                 out.push_back(group_json(*analysis, r->fusion->groups[k], r->groups[k]));
                               return out;
                             },
                             [r, analysis](std::ostream& out) { print_heaviest(*analysis, *r, out); }});
}

void write_groups_csv(const Analysis& analysis, const RooflineReport& r, std::ostream& out, const DeployedMeasurement* measured) {
  const bool with_measured = measured && measured->groups.size() == r.groups.size();
  out << "group,pattern,label,anchor,members,nodes,macs,flops,bytes,arithmetic_intensity,bound,predicted_us,share"
      << (with_measured ? ",measured_us,runner,fell_back" : "") << "\r\n";
  for (size_t k = 0; k < r.groups.size(); ++k) {
    const FusedGroup& g = r.fusion->groups[k];
    const NodeRoofline& gr = r.groups[k];
    out << g.id << ',' << csv_field(g.pattern) << ',' << csv_field(g.label) << ','
        << csv_field(analysis.nodes[g.anchor].node->name) << ',' << csv_field(member_names(analysis, g, " ")) << ','
        << g.members.size() << ',' << fmt::format("{:.17g}", g.macs) << ','
        << fmt::format("{:.17g}", gr.launches ? gr.flops : g.flops) << ','
        << fmt::format("{:.17g}", gr.launches ? gr.bytes : g.bytes()) << ',' << fmt::format("{:.17g}", gr.intensity) << ','
        << bound_name(gr.bound) << ',' << fmt::format("{:.17g}", gr.predicted_us) << ',' << fmt::format("{:.17g}", gr.share);
    if (with_measured) {
      const GroupMeasurement& m = measured->groups[k];
      out << ',' << (m.timing.measured ? fmt::format("{:.17g}", m.timing.zero_cost ? 0.0 : m.timing.median_us) : "")
          << ',' << csv_field(m.runner) << ',' << (m.fell_back ? "yes" : "no");
    }
    out << "\r\n";
  }
}

}  // namespace modelcost
