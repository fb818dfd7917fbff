#include "report/model_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "report/aggregate.h"
#include "report/csv_writer.h"
#include "report/number_format.h"
#include "report/text_table.h"

namespace modelcost {
namespace {

std::string qualified(const Node& node) {
  return node.domain.empty() || node.domain == "ai.onnx" ? node.op_type : node.domain + "." + node.op_type;
}

// The structure a node is matched by when its name is not found: op type and output shapes.
std::string structure_key(const NodeAnalysis& n) {
  std::string key = qualified(*n.node);
  for (int id : n.node->outputs) {
    if (id < 0) continue;
    const TensorInfo& t = n.graph->tensors[id];
    key += "|";
    if (!t.has_shape) key += "?";
    for (int64_t d : t.shape) key += std::to_string(d) + "x";
  }
  return key;
}

std::string bound_at(const Report& r, size_t row) {
  const ReportColumn* c = r.find_column("bound");
  if (!c || !c->value) return "";
  const CellValue v = c->value(r.analysis->nodes[row], row);
  return v.type == CellValue::Type::kText ? v.text : "";
}

std::vector<double> values_at(const Report& r, const std::vector<DiffFigure>& figures, size_t row) {
  std::vector<double> v;
  for (const auto& f : figures) {
    const ReportColumn* c = r.find_column(f.name);
    v.push_back(c ? number_at(*c, r.analysis->nodes[row], row) : 0.0);
  }
  return v;
}

void match_nodes(ModelDiff& d) {
  const auto& na = d.a->analysis->nodes;
  const auto& nb = d.b->analysis->nodes;
  std::unordered_map<std::string, size_t> b_by_name;
  for (size_t j = 0; j < nb.size(); ++j) b_by_name.emplace(nb[j].node->name, j);
  std::vector<std::optional<size_t>> partner(na.size());
  std::vector<bool> b_taken(nb.size(), false);
  for (size_t i = 0; i < na.size(); ++i) {
    auto it = b_by_name.find(na[i].node->name);
    if (it == b_by_name.end() || b_taken[it->second] || qualified(*nb[it->second].node) != qualified(*na[i].node)) continue;
    partner[i] = it->second;
    b_taken[it->second] = true;
  }
  // The rest by structure, first come first matched, in graph order.
  std::map<std::string, std::vector<size_t>> free_b;
  for (size_t j = nb.size(); j-- > 0;)
    if (!b_taken[j]) free_b[structure_key(nb[j])].push_back(j);
  std::vector<bool> by_structure(na.size(), false);
  for (size_t i = 0; i < na.size(); ++i) {
    if (partner[i]) continue;
    auto it = free_b.find(structure_key(na[i]));
    if (it == free_b.end() || it->second.empty()) continue;
    partner[i] = it->second.back();
    it->second.pop_back();
    b_taken[*partner[i]] = true;
    by_structure[i] = true;
  }
  for (size_t i = 0; i < na.size(); ++i) {
    NodeDiff n;
    n.a = i;
    n.b = partner[i];
    n.op_type = qualified(*na[i].node);
    n.match = !partner[i] ? "removed" : by_structure[i] ? "structure" : "name";
    d.nodes.push_back(std::move(n));
  }
  for (size_t j = 0; j < nb.size(); ++j)
    if (!b_taken[j]) {
      NodeDiff n;
      n.b = j;
      n.op_type = qualified(*nb[j].node);
      n.match = "added";
      d.nodes.push_back(std::move(n));
    }
}

}  // namespace

ModelDiff diff_reports(const Report& a, const Report& b) {
  ModelDiff d;
  d.a = &a;
  d.b = &b;
  d.figures = {{"macs", ColumnKind::kCount},       {"flops", ColumnKind::kCount},          {"params", ColumnKind::kCount},
               {"bytes_read", ColumnKind::kBytes}, {"bytes_written", ColumnKind::kBytes}};
  for (const char* timed : {"predicted_us", "measured_us"})
    if (a.find_column(timed) && b.find_column(timed)) d.figures.push_back({timed, ColumnKind::kTime});
  match_nodes(d);
  const size_t figures = d.figures.size();
  d.totals_a.assign(figures, 0);
  d.totals_b.assign(figures, 0);
  std::map<std::string, OpTypeDiff> by_op;
  for (auto& n : d.nodes) {
    n.values_a = n.a ? values_at(a, d.figures, *n.a) : std::vector<double>(figures, 0.0);
    n.values_b = n.b ? values_at(b, d.figures, *n.b) : std::vector<double>(figures, 0.0);
    if (n.a) n.bound_a = bound_at(a, *n.a);
    if (n.b) n.bound_b = bound_at(b, *n.b);
    if (n.a && n.b && n.bound_a != n.bound_b) ++d.bound_changes;
    d.matched_by_name += n.match == "name";
    d.matched_by_structure += n.match == "structure";
    d.removed += n.match == "removed";
    d.added += n.match == "added";
    auto add_to = [&](const std::string& op, const std::vector<double>& v, bool side_a) {
      OpTypeDiff& o = by_op[op];
      if (o.sums_a.empty()) o.op_type = op, o.sums_a.assign(figures, 0), o.sums_b.assign(figures, 0);
      ++(side_a ? o.count_a : o.count_b);
      for (size_t f = 0; f < figures; ++f) (side_a ? o.sums_a : o.sums_b)[f] += v[f];
    };
    if (n.a) add_to(qualified(*a.analysis->nodes[*n.a].node), n.values_a, true);
    if (n.b) add_to(qualified(*b.analysis->nodes[*n.b].node), n.values_b, false);
  }
  // Totals are the models' own (params counts each shared weight once), per-node sums otherwise.
  for (size_t f = 0; f < figures; ++f) {
    auto total_of = [&](const Report& r, double summed) {
      for (const auto& t : r.totals)
        if (t.name == d.figures[f].name && t.value) {
          const CellValue v = t.value(*r.analysis);
          if (v.type == CellValue::Type::kNumber) return v.number;
        }
      return summed;
    };
    double sum_a = 0, sum_b = 0;
    for (const auto& n : d.nodes) sum_a += n.values_a[f], sum_b += n.values_b[f];
    d.totals_a[f] = total_of(a, sum_a);
    d.totals_b[f] = total_of(b, sum_b);
  }
  d.whole_model = whole_model_figures(a, b);
  const size_t rank = d.figures.size() > 5 ? 5 : 1;  // predicted time when present, else FLOPs
  for (auto& [op, o] : by_op) d.op_types.push_back(std::move(o));
  std::stable_sort(d.op_types.begin(), d.op_types.end(), [rank](const OpTypeDiff& x, const OpTypeDiff& y) {
    return std::fabs(x.sums_b[rank] - x.sums_a[rank]) > std::fabs(y.sums_b[rank] - y.sums_a[rank]);
  });
  return d;
}

namespace {

std::string name_in(const Report* r, const std::optional<size_t>& row) {
  return row ? r->analysis->nodes[*row].node->name : std::string();
}

std::string signed_text(double delta, ColumnKind kind) {
  if (delta == 0) return "0";
  const std::string magnitude = terminal_text(CellValue::of_number(std::fabs(delta)), kind);
  return (delta > 0 ? "+" : "-") + magnitude;
}

std::string change_text(double a, double b) {
  if (a == b) return "0%";
  if (a == 0) return "new";
  return fmt::format("{:+.1f}%", (b - a) / a * 100);
}

std::string figure_title(const DiffFigure& f) {
  static const std::map<std::string, std::string> titles = {{"macs", "MACs"},        {"flops", "FLOPs"},
                                                            {"params", "params"},    {"bytes_read", "bytes read"},
                                                            {"bytes_written", "bytes written"},
                                                            {"predicted_us", "predicted us, as written"}, {"measured_us", "measured us"}};
  auto it = titles.find(f.name);
  return it == titles.end() ? f.name : it->second;
}

}  // namespace

void print_diff(const ModelDiff& d, size_t top, std::ostream& out) {
  out << "modelcost " << d.a->tool_version << " diff\n  A  " << d.a->model().path << "\n  B  " << d.b->model().path << "\n";
  out << fmt::format("\nNodes: {} in A, {} in B; {} matched by name, {} by structure, {} removed, {} added", d.a->analysis->nodes.size(),
                     d.b->analysis->nodes.size(), d.matched_by_name, d.matched_by_structure, d.removed, d.added);
  if (d.figures.size() > 5) out << fmt::format(", {} bound changes", d.bound_changes);
  const std::string view = report_view(*d.a);
  out << "\n\nTotals" << (view.empty() ? "" : " (per-node sums, then the whole model; plan in the " + view + " view)") << "\n";
  TextTable totals;
  totals.add_column("figure", TextTable::Align::kLeft);
  for (const char* t : {"A", "B", "B - A", "change"}) totals.add_column(t, TextTable::Align::kRight);
  for (size_t f = 0; f < d.figures.size(); ++f) {
    const ColumnKind k = d.figures[f].kind;
    totals.add_row({figure_title(d.figures[f]), terminal_text(CellValue::of_number(d.totals_a[f]), k),
                    terminal_text(CellValue::of_number(d.totals_b[f]), k), signed_text(d.totals_b[f] - d.totals_a[f], k),
                    change_text(d.totals_a[f], d.totals_b[f])});
  }
  for (const auto& f : d.whole_model)
    totals.add_row({f.title, terminal_text(CellValue::of_number(f.a), f.kind), terminal_text(CellValue::of_number(f.b), f.kind),
                    signed_text(f.b - f.a, f.kind), change_text(f.a, f.b)});
  totals.print(out);
  const size_t rank = d.figures.size() > 5 ? 5 : 1;
  const DiffFigure& ranked = d.figures[rank];
  auto delta_columns = [&](TextTable& t) {
    for (const auto& f : d.figures) t.add_column("d " + figure_title(f), TextTable::Align::kRight);
  };
  if (top == 0) return;
  TextTable ops;
  ops.add_column("op", TextTable::Align::kLeft);
  ops.add_column("count A", TextTable::Align::kRight);
  ops.add_column("count B", TextTable::Align::kRight);
  delta_columns(ops);
  size_t shown = 0;
  for (const auto& o : d.op_types) {
    bool changed = o.count_a != o.count_b;
    for (size_t f = 0; f < d.figures.size(); ++f) changed = changed || o.sums_a[f] != o.sums_b[f];
    if (!changed || shown++ >= top) continue;
    std::vector<std::string> cells{o.op_type, std::to_string(o.count_a), std::to_string(o.count_b)};
    for (size_t f = 0; f < d.figures.size(); ++f) cells.push_back(signed_text(o.sums_b[f] - o.sums_a[f], d.figures[f].kind));
    ops.add_row(std::move(cells));
  }
  out << "\nOp types that changed, by |d " << figure_title(ranked) << "|" << (ops.rows() ? "" : ": none") << "\n";
  if (ops.rows()) ops.print(out);
  // The nodes that changed most.
  std::vector<size_t> order;
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeDiff& n = d.nodes[i];
    bool changed = n.match == "added" || n.match == "removed" || n.bound_a != n.bound_b;
    for (size_t f = 0; f < d.figures.size(); ++f) changed = changed || n.values_a[f] != n.values_b[f];
    if (changed) order.push_back(i);
  }
  auto delta = [&](size_t i) { return std::fabs(d.nodes[i].values_b[rank] - d.nodes[i].values_a[rank]); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return delta(x) > delta(y); });
  out << "\nNodes that changed (" << order.size() << "), by |d " << figure_title(ranked) << "|" << (order.empty() ? "" : "") << "\n";
  if (order.empty()) return;
  TextTable nodes;
  nodes.add_column("node", TextTable::Align::kLeft, 44);
  nodes.add_column("op", TextTable::Align::kLeft);
  nodes.add_column("match", TextTable::Align::kLeft);
  delta_columns(nodes);
  if (d.figures.size() > 5) nodes.add_column("bound A -> B", TextTable::Align::kLeft);
  for (size_t k = 0; k < order.size() && k < top; ++k) {
    const NodeDiff& n = d.nodes[order[k]];
    std::vector<std::string> cells{n.b ? name_in(d.b, n.b) : name_in(d.a, n.a), n.op_type, n.match};
    for (size_t f = 0; f < d.figures.size(); ++f) cells.push_back(signed_text(n.values_b[f] - n.values_a[f], d.figures[f].kind));
    if (d.figures.size() > 5)
      cells.push_back(n.bound_a == n.bound_b ? n.bound_a : (n.bound_a.empty() ? "-" : n.bound_a) + " -> " + (n.bound_b.empty() ? "-" : n.bound_b));
    nodes.add_row(std::move(cells));
  }
  nodes.print(out);
  if (order.size() > top) out << "  ... " << order.size() - top << " more (the CSV and JSON list every node)\n";
}

void write_diff_csv(const ModelDiff& d, std::ostream& out) {
  out << "match,name_a,name_b,op_type";
  for (const auto& f : d.figures) out << "," << f.name << "_a," << f.name << "_b," << f.name << "_delta";
  out << ",bound_a,bound_b\r\n";
  for (const auto& n : d.nodes) {
    out << n.match << "," << csv_field(name_in(d.a, n.a)) << "," << csv_field(name_in(d.b, n.b)) << "," << csv_field(n.op_type);
    for (size_t f = 0; f < d.figures.size(); ++f) {
      out << "," << (n.a ? exact_number(n.values_a[f]) : "") << "," << (n.b ? exact_number(n.values_b[f]) : "") << ","
          << exact_number(n.values_b[f] - n.values_a[f]);
    }
    out << "," << n.bound_a << "," << n.bound_b << "\r\n";
  }
}

void write_diff_json(const ModelDiff& d, std::ostream& out) {
  auto side = [](const Report& r) {
    return Json{{"path", r.model().path}, {"nodes", r.analysis->nodes.size()}};
  };
  Json totals = Json::object();
  for (size_t f = 0; f < d.figures.size(); ++f)
    totals[d.figures[f].name] = {{"a", json_number(d.totals_a[f])}, {"b", json_number(d.totals_b[f])},
                                 {"delta", json_number(d.totals_b[f] - d.totals_a[f])}};
  Json whole_model = Json::object();
  for (const auto& f : d.whole_model)
    whole_model[f.name] = {{"title", f.title}, {"a", json_number(f.a)}, {"b", json_number(f.b)}, {"delta", json_number(f.b - f.a)}};
  Json matching = {{"by_name", d.matched_by_name}, {"by_structure", d.matched_by_structure}, {"removed", d.removed},
                   {"added", d.added},           {"bound_changes", d.bound_changes}};
  Json ops = Json::array();
  for (const auto& o : d.op_types) {
    Json row = {{"op_type", o.op_type}, {"count_a", o.count_a}, {"count_b", o.count_b}};
    for (size_t f = 0; f < d.figures.size(); ++f)
      row[d.figures[f].name] = {{"a", json_number(o.sums_a[f])}, {"b", json_number(o.sums_b[f])}, {"delta", json_number(o.sums_b[f] - o.sums_a[f])}};
    ops.push_back(std::move(row));
  }
  Json nodes = Json::array();
  for (const auto& n : d.nodes) {
    Json row = {{"match", n.match},
                {"name_a", n.a ? Json(name_in(d.a, n.a)) : Json(nullptr)},
                {"name_b", n.b ? Json(name_in(d.b, n.b)) : Json(nullptr)},
                {"op_type", n.op_type}};
    for (size_t f = 0; f < d.figures.size(); ++f)
      row[d.figures[f].name] = {{"a", n.a ? json_number(n.values_a[f]) : Json(nullptr)},
                                {"b", n.b ? json_number(n.values_b[f]) : Json(nullptr)},
                                {"delta", json_number(n.values_b[f] - n.values_a[f])}};
    row["bound_a"] = n.bound_a.empty() ? Json(nullptr) : Json(n.bound_a);
    row["bound_b"] = n.bound_b.empty() ? Json(nullptr) : Json(n.bound_b);
    nodes.push_back(std::move(row));
  }
  Json root = {{"modelcost_version", d.a->tool_version}, {"a", side(*d.a)},    {"b", side(*d.b)},  {"figures", Json::array()},
               {"matching", matching},                  {"totals", totals},    {"whole_model", whole_model},    {"by_op_type", ops}, {"nodes", nodes}};
  for (const auto& f : d.figures) root["figures"].push_back(f.name);
  out << root.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace modelcost
