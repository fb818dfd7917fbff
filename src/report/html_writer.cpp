#include "report/html_writer.h"

#include <sstream>

#include "report/aggregate.h"
#include "report/model_info.h"
#include "report/number_format.h"

namespace modelcost {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
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

const char* kStyle = R"(body{font:14px/1.4 system-ui,-apple-system,"DejaVu Sans",Arial,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0}td.t,th.t{text-align:left}table.sortable th{cursor:pointer;user-select:none}
table.sortable th.asc::after{content:" \25B2"}table.sortable th.desc::after{content:" \25BC"}
.meta{color:#555}pre{background:#f8f8f8;padding:8px;overflow-x:auto;font-size:12px}.scroll{max-height:70vh;overflow:auto}
input{margin:4px 0 8px;padding:3px 6px;width:320px})";

// Click a header to sort by it (numbers by their exact value in data-v), again to reverse; the
// filter box keeps rows whose text contains it.
const char* kScript = R"(for(const t of document.querySelectorAll('table.sortable')){
const hs=[...t.tHead.rows[0].cells];hs.forEach((h,i)=>h.addEventListener('click',()=>{
const down=!h.classList.contains('desc');hs.forEach(o=>o.classList.remove('asc','desc'));h.classList.add(down?'desc':'asc');
const b=t.tBodies[0],rows=[...b.rows];const key=r=>{const c=r.cells[i];return c.dataset.v!==undefined?Number(c.dataset.v):c.textContent};
rows.sort((x,y)=>{const a=key(x),c=key(y);const r=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare(String(c));return down?-r:r});
rows.forEach(r=>b.appendChild(r))}))}
const f=document.getElementById('filter');if(f)f.addEventListener('input',()=>{const q=f.value.toLowerCase();
for(const r of document.querySelectorAll('#nodes tbody tr'))r.style.display=r.textContent.toLowerCase().includes(q)?'':'none'});
document.body.dataset.ready='1';)";

bool is_numeric(ColumnKind kind) { return kind != ColumnKind::kText && kind != ColumnKind::kFlag; }

// A cell: the terminal's human text, the exact number in data-v (for sorting) and the tooltip.
std::string cell_html(const CellValue& cell, ColumnKind kind) {
  const std::string text = escape(terminal_text(cell, kind));
  if (cell.type != CellValue::Type::kNumber) return "<td class=\"t\">" + text + "</td>";
  const std::string exact = exact_number(cell.number);
  return "<td data-v=\"" + (exact.empty() ? std::string("0") : exact) + "\" title=\"" + exact + "\">" + text + "</td>";
}

void write_header(const Report& report, std::ostream& out) {
  const Model& model = report.model();
  out << "<h1>modelcost " << escape(report.tool_version) << ": " << escape(model.path) << "</h1>\n<div class=\"meta\">producer "
      << escape(model.producer.empty() ? "(none)" : model.producer) << ", IR version " << model.ir_version << "; opsets ";
  bool first = true;
  for (const auto& [domain, version] : sorted_opsets(model)) out << (first ? "" : ", ") << escape(domain) << " " << version, first = false;
  out << "</div>\n<h2>Inputs</h2>\n<table><thead><tr><th class=\"t\">input</th><th class=\"t\">dtype</th><th class=\"t\">declared</th>"
         "<th class=\"t\">analysed as</th></tr></thead><tbody>\n";
  for (const auto& input : summarize_inputs(*report.analysis)) {
    std::string declared;
    for (size_t i = 0; i < input.declared.size(); ++i) declared += (i ? "," : "") + input.declared[i];
    out << "<tr><td class=\"t\">" << escape(input.name) << "</td><td class=\"t\">" << escape(input.dtype.empty() ? "?" : input.dtype)
        << "</td><td class=\"t\">[" << escape(declared) << "]</td><td class=\"t\">"
        << escape(input.has_shape ? shape_dims_text(input.shape) : "?") << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_totals(const Report& report, std::ostream& out) {
  out << "<h2>Totals</h2>\n<table id=\"totals\"><tbody>\n";
  for (const auto& t : report.totals) {
    if (!t.value) continue;
    out << "<tr><td class=\"t\">" << escape(t.title) << "</td>" << cell_html(t.value(*report.analysis), t.kind) << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_sections(const Report& report, std::ostream& out) {
  for (const auto& section : report.sections) {
    if (!section.print) continue;
    std::ostringstream text;
    section.print(text);
    std::string body = text.str();
    while (!body.empty() && body.front() == '\n') body.erase(0, 1);
    if (body.empty()) continue;
    out << "<h2>" << escape(section.name) << "</h2>\n<pre>" << escape(body) << "</pre>\n";
  }
}

void write_nodes(const Report& report, std::ostream& out) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if (c.value && (c.sinks & (kSinkCsv | kSinkTable)) && c.name != "op" && c.name != "bytes") columns.push_back(&c);
  const auto& nodes = report.analysis->nodes;
  out << "<h2>Nodes (" << nodes.size() << ")</h2>\n<input id=\"filter\" placeholder=\"filter rows (name, op, ...)\">\n"
      << "<div class=\"scroll\"><table id=\"nodes\" class=\"sortable\"><thead><tr><th>#</th>";
  for (const auto* c : columns)
    out << "<th" << (is_numeric(c->kind) ? "" : " class=\"t\"") << " title=\"" << escape(c->name + (c->unit.empty() ? "" : " (" + c->unit + ")"))
        << "\">" << escape(c->name) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (size_t row = 0; row < nodes.size(); ++row) {
    out << "<tr><td data-v=\"" << row << "\">" << row << "</td>";
    for (const auto* c : columns) out << cell_html(c->value(nodes[row], row), c->kind);
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

void write_op_types(const Report& report, std::ostream& out) {
  const OpTypeSummary summary = summarize_by_op_type(report);
  out << "<h2>By op type (" << summary.rows.size() << ")</h2>\n<table id=\"op-types\" class=\"sortable\"><thead><tr>"
      << "<th class=\"t\">op</th><th>count</th>";
  for (const auto* c : summary.columns) out << "<th>" << escape(c->name) << "</th>";
  out << "<th>" << escape(summary.share_name) << "</th></tr></thead><tbody>\n";
  for (const auto& row : summary.rows) {
    out << "<tr><td class=\"t\">" << escape(row.domain.empty() ? row.op_type : row.domain + "." + row.op_type) << "</td>"
        << cell_html(CellValue::of_number(double(row.count)), ColumnKind::kInteger);
    for (size_t c = 0; c < summary.columns.size(); ++c) out << cell_html(CellValue::of_number(row.sums[c]), summary.columns[c]->kind);
    out << cell_html(CellValue::of_number(row.share), ColumnKind::kShare) << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

}  // namespace

void write_html(const Report& report, const HtmlOptions& options, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>modelcost: " << escape(report.model().path)
      << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n";
  write_header(report, out);
  write_totals(report, out);
  write_sections(report, out);
  if (!options.roofline_svg.empty()) {
    std::string svg = options.roofline_svg;
    svg.erase(0, svg.find("<svg"));  // inline SVG takes no XML declaration
    out << "<h2>Roofline</h2>\n" << svg;
  }
  write_nodes(report, out);
  write_op_types(report, out);
  const auto& warnings = report.analysis->warnings;
  if (!warnings.empty()) {
    out << "<h2>Warnings (" << warnings.size() << ")</h2>\n<ul>\n";
    for (const auto& w : warnings) out << "<li>" << escape(w) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<script>" << kScript << "</script>\n</body></html>\n";
}

}  // namespace modelcost
