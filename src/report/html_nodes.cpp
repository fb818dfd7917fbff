#include "report/html_nodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "report/aggregate.h"
#include "report/html_sections.h"
#include "report/number_format.h"

namespace modelcost {
namespace {

constexpr size_t kRowsShownFirst = 100;

char kind_letter(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kCount: return 'c';
    case ColumnKind::kInteger: return 'i';
    case ColumnKind::kBytes: return 'b';
    case ColumnKind::kRatio: return 'r';
    case ColumnKind::kTime: return 't';
    case ColumnKind::kShare: return 's';
    case ColumnKind::kFlag: return 'f';
    case ColumnKind::kText: return 'x';
  }
  return 'x';
}

bool is_numeric(ColumnKind kind) { return kind != ColumnKind::kText && kind != ColumnKind::kFlag; }

std::vector<const ReportColumn*> table_columns(const Report& report) {
  std::vector<const ReportColumn*> columns;
  for (const auto& c : report.columns)
    if (c.value && (c.sinks & (kSinkCsv | kSinkTable)) && c.name != "op" && c.name != "bytes") columns.push_back(&c);
  return columns;
}

bool zero_cost(const NodeAnalysis& node) {
  return node.cost.flops == 0 && node.cost.bytes_read + node.cost.bytes_written == 0;
}

// Costed nodes by the rank column, heaviest first; then the zero-cost ones in graph order.
std::vector<size_t> ranked_rows(const Report& report, size_t* zero) {
  const auto& nodes = report.analysis->nodes;
  const ReportColumn* rank = report.find_column(report.rank_by);
  std::vector<double> cost(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) cost[i] = rank ? number_at(*rank, nodes[i], i) : nodes[i].cost.flops;
  std::vector<size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (zero_cost(nodes[a]) != zero_cost(nodes[b])) return zero_cost(nodes[b]);
    return cost[a] > cost[b];
  });
  *zero = static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), zero_cost));
  return order;
}

Json cell_value(const CellValue& cell) {
  switch (cell.type) {
    case CellValue::Type::kEmpty: return nullptr;
    case CellValue::Type::kText: return cell.text;
    case CellValue::Type::kFlag: return cell.flag;
    case CellValue::Type::kNumber: {
      // Six digits sort and show as well as seventeen, in a third of the page.
      const Json exact = json_number(cell.number);
      return exact.is_number_float() ? Json(std::stod(fmt::format("{:.6g}", cell.number))) : exact;
    }
  }
  return nullptr;
}

std::string cell_html(const CellValue& cell, ColumnKind kind) {
  const std::string text = html_escape(terminal_text(cell, kind));
  if (cell.type != CellValue::Type::kNumber) return "<td class=\"t\">" + text + "</td>";
  const std::string exact = exact_number(cell.number);
  return "<td data-v=\"" + (exact.empty() ? std::string("0") : exact) + "\" title=\"" + exact + "\">" + text + "</td>";
}

// {"columns": [[name, kind]], "rows": [[node index, value...]], "zero": count}, safe inside <script>.
std::string node_data(const Report& report, const std::vector<const ReportColumn*>& columns, const std::vector<size_t>& order,
                      size_t zero) {
  const auto& nodes = report.analysis->nodes;
  Json data = {{"columns", Json::array()}, {"rows", Json::array()}, {"zero", zero}};
  for (const auto* c : columns) data["columns"].push_back(Json::array({c->name, std::string(1, kind_letter(c->kind))}));
  for (size_t row : order) {
    Json values = Json::array({row});
    for (const auto* c : columns) values.push_back(cell_value(c->value(nodes[row], row)));
    data["rows"].push_back(std::move(values));
  }
  std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) text.replace(at, 2, "<\\/");
  return text;
}

}  // namespace

void write_html_nodes(const Report& report, std::ostream& out) {
  const std::vector<const ReportColumn*> columns = table_columns(report);
  const auto& nodes = report.analysis->nodes;
  size_t zero = 0;
  const std::vector<size_t> order = ranked_rows(report, &zero);
  out << "<h2>Nodes (" << nodes.size() << "), heaviest first by " << html_escape(report.rank_by) << "</h2>\n"
      << "<input id=\"filter\" placeholder=\"filter rows (name, op, ...)\">\n<div class=\"scroll\"><table id=\"nodes\" class=\"sortable\">"
      << "<thead><tr><th title=\"graph order\">#</th>";
  for (const auto* c : columns)
    out << "<th" << (is_numeric(c->kind) ? "" : " class=\"t\"") << " title=\""
        << html_escape(c->name + (c->unit.empty() ? "" : " (" + c->unit + ")")) << "\">" << html_escape(c->name) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (size_t k = 0; k < order.size() && k < kRowsShownFirst && k < nodes.size() - zero; ++k) {
    const size_t row = order[k];
    out << "<tr><td data-v=\"" << row << "\">" << row << "</td>";
    for (const auto* c : columns) out << cell_html(c->value(nodes[row], row), c->kind);
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n<p id=\"node-status\" class=\"meta\"></p>\n"
      << "<script type=\"application/json\" id=\"node-data\">" << node_data(report, columns, order, zero) << "</script>\n";
}

// Sorting and filtering work on the embedded rows; only `limit` rows are ever in the DOM.
const char* html_nodes_script() {
  return R"JS(function three(v){if(v===0)return'0';const m=Math.abs(v);if(m>=1e15||m<1e-3)return v.toPrecision(3);
let d=Math.max(0,2-Math.floor(Math.log10(m)));let t=v.toFixed(d);if(d>0&&Math.abs(+t)>=Math.pow(10,3-d))t=v.toFixed(d-1);return t}
function scaled(v,units,bytes){let m=Math.abs(v),u=0;while(u+1<units.length&&m>=999.5){m/=1000;v/=1000;u++}
const n=(u===0&&v===Math.floor(v))?String(v):three(v);const t=n+' '+units[u];return bytes?t:t.trimEnd()}
function fmt(v,k){if(v===null||v===undefined)return'-';if(typeof v==='boolean')return v?'yes':'no';if(typeof v==='string')return v;
if(k==='c')return scaled(v,['','K','M','G','T','P','E'],false);if(k==='b')return scaled(v,['B','KB','MB','GB','TB','PB','EB'],true);
if(k==='s')return(v*100).toFixed(1)+'%';if(k==='r'||k==='t')return three(v);return String(v)}
const esc=s=>s.replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const nodeData=document.getElementById('node-data');
if(nodeData){const D=JSON.parse(nodeData.textContent),t=document.getElementById('nodes'),body=t.tBodies[0],
status=document.getElementById('node-status'),costed=D.rows.length-D.zero;let limit=100,zero=false,q='',order=D.rows;
const text=r=>r.filter(v=>typeof v==='string').join(' ').toLowerCase();
function render(){const rows=order.filter(r=>(zero||!r.z)&&(!q||text(r).includes(q)));
body.innerHTML=rows.slice(0,limit).map(r=>'<tr><td data-v="'+r[0]+'">'+r[0]+'</td>'+r.slice(1).map((v,i)=>{const k=D.columns[i][1];
return typeof v==='number'?'<td data-v="'+v+'" title="'+v+'">'+fmt(v,k)+'</td>':'<td class="t">'+esc(fmt(v,k))+'</td>'}).join('')+'</tr>').join('');
status.innerHTML='Showing '+Math.min(limit,rows.length)+' of '+rows.length+' nodes'+(zero?'':' ('+D.zero+' zero-cost layout nodes hidden)')+'. '+
(rows.length>limit?'<button id="more">show 500 more</button> <button id="all">show all</button> ':'')+
(D.zero?'<button id="zero">'+(zero?'hide':'show')+' zero-cost nodes</button>':'');
const b=id=>document.getElementById(id);if(b('more'))b('more').onclick=()=>{limit+=500;render()};
if(b('all'))b('all').onclick=()=>{limit=Infinity;render()};if(b('zero'))b('zero').onclick=()=>{zero=!zero;render()}}
D.rows.forEach((r,i)=>{if(i>=costed)r.z=1});
const hs=[...t.tHead.rows[0].cells];hs.forEach((h,i)=>h.addEventListener('click',()=>{const down=!h.classList.contains('desc');
hs.forEach(o=>o.classList.remove('asc','desc'));h.classList.add(down?'desc':'asc');const val=v=>v===null?-Infinity:v;
order=[...D.rows].sort((x,y)=>{const a=val(x[i]),c=val(y[i]);
const r=(typeof a==='number'&&typeof c==='number')?(a===c?0:a-c):String(a).localeCompare(String(c));return down?-r:r});render()}));
const f=document.getElementById('filter');if(f)f.addEventListener('input',()=>{q=f.value.toLowerCase();render()});render()}
for(const t of document.querySelectorAll('table.sortable:not(#nodes)')){const hs=[...t.tHead.rows[0].cells];hs.forEach((h,i)=>h.addEventListener('click',()=>{
const down=!h.classList.contains('desc');hs.forEach(o=>o.classList.remove('asc','desc'));h.classList.add(down?'desc':'asc');
const b=t.tBodies[0],rows=[...b.rows];const key=r=>{const c=r.cells[i];return c.dataset.v!==undefined?Number(c.dataset.v):c.textContent};
rows.sort((x,y)=>{const a=key(x),c=key(y);const r=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare(String(c));return down?-r:r});
rows.forEach(r=>b.appendChild(r))}))}
document.body.dataset.ready='1';)JS";
}

}  // namespace modelcost
