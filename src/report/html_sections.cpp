#include "report/html_sections.h"

#include <algorithm>
#include <map>
#include <set>

#include "report/number_format.h"

namespace modelcost {
namespace {

// Longer lists show their first rows; the JSON report has them all.
constexpr size_t kMaxSectionRows = 200;

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// How a member's number reads, from its name: bytes, times, shares, rates and counts.
ColumnKind kind_of(const std::string& key, const Json& value) {
  const std::string base = key.substr(0, key.find('@'));
  if (ends_with(base, "_bytes") || base == "bytes") return ColumnKind::kBytes;
  if (base.rfind("share", 0) == 0 || base == "share") return ColumnKind::kShare;
  if (ends_with(base, "_ms") || ends_with(base, "_us") || ends_with(base, "_gb") || ends_with(base, "_gbps") ||
      ends_with(base, "_tflops") || ends_with(base, "_usd") || base == "arithmetic_intensity")
    return ColumnKind::kTime;  // three significant digits
  if (base == "macs" || base == "flops" || base == "params" || ends_with(base, "_per_s")) return ColumnKind::kCount;
  return value.is_number_integer() || value.is_number_unsigned() ? ColumnKind::kInteger : ColumnKind::kRatio;
}

std::string cell(const std::string& key, const Json& value) {
  if (value.is_number()) {
    const double number = value.get<double>();
    const std::string exact = exact_number(number);
    return "<td data-v=\"" + exact + "\" title=\"" + exact + "\">" +
           html_escape(terminal_text(CellValue::of_number(number), kind_of(key, value))) + "</td>";
  }
  if (value.is_null()) return "<td>-</td>";
  if (value.is_boolean()) return std::string("<td class=\"t\">") + (value.get<bool>() ? "yes" : "no") + "</td>";
  if (value.is_string()) return "<td class=\"t\">" + html_escape(value.get<std::string>()) + "</td>";
  if (value.is_array()) {  // a list (a kernel's member nodes): its length, the items in the tooltip
    std::string items;
    for (const auto& item : value) items += (items.empty() ? "" : ", ") + (item.is_string() ? item.get<std::string>() : item.dump());
    return "<td data-v=\"" + std::to_string(value.size()) + "\" title=\"" + html_escape(items) + "\">" + std::to_string(value.size()) + "</td>";
  }
  return "<td class=\"t\">" + html_escape(value.dump()) + "</td>";
}

bool is_record_list(const Json& value) { return value.is_array() && !value.empty() && value.front().is_object(); }

std::string title_of(const std::string& key) {
  std::string title = key;
  for (char& ch : title)
    if (ch == '_') ch = ' ';
  return title;
}

// A list of records as a sortable table, one column per member in first-seen order.
void write_record_table(const Json& rows, std::ostream& out) {
  std::vector<std::string> columns;
  std::set<std::string> seen;
  for (const auto& row : rows)
    for (const auto& [key, value] : row.items())
      if (!is_record_list(value) && seen.insert(key).second) columns.push_back(key);
  out << "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>";
  for (const auto& c : columns) {
    const Json& sample = rows.front().contains(c) ? rows.front()[c] : Json();
    out << "<th" << (sample.is_number() || sample.is_null() ? "" : " class=\"t\"") << ">" << html_escape(title_of(c)) << "</th>";
  }
  out << "</tr></thead><tbody>\n";
  for (size_t r = 0; r < rows.size() && r < kMaxSectionRows; ++r) {
    out << "<tr>";
    for (const auto& c : columns) out << cell(c, rows[r].contains(c) ? rows[r][c] : Json());
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
  if (rows.size() > kMaxSectionRows)
    out << "<p class=\"meta\">The first " << kMaxSectionRows << " of " << rows.size() << " rows; the JSON report has them all.</p>\n";
}

// A record: its plain members as a two-column table, its lists of records as tables under it.
void write_record(const Json& record, std::ostream& out) {
  out << "<table class=\"kv\"><tbody>\n";
  for (const auto& [key, value] : record.items())
    if (!is_record_list(value) && !(value.is_object() && !value.empty()))
      out << "<tr><td class=\"t\">" << html_escape(title_of(key)) << "</td>" << cell(key, value) << "</tr>\n";
  out << "</tbody></table>\n";
  for (const auto& [key, value] : record.items()) {
    if (is_record_list(value)) {
      out << "<h3>" << html_escape(title_of(key)) << "</h3>\n";
      write_record_table(value, out);
    } else if (value.is_object() && !value.empty()) {
      out << "<h3>" << html_escape(title_of(key)) << "</h3>\n";
      write_record(value, out);
    }
  }
}

void write_section(const std::string& title, const Json& json, std::ostream& out) {
  out << "<h2>" << html_escape(title) << "</h2>\n";
  if (is_record_list(json) && json.front().contains("rows")) {  // one plan per device
    for (const auto& record : json) {
      out << "<h3>" << html_escape(record.value("device", "")) << "</h3>\n";
      write_record(record, out);
    }
  } else if (is_record_list(json) && json.front().contains("predicted_us")) {  // kernels: the costliest first
    Json rows = json;
    std::stable_sort(rows.begin(), rows.end(), [](const Json& a, const Json& b) {
      return a.value("predicted_us", 0.0) > b.value("predicted_us", 0.0);
    });
    write_record_table(rows, out);
  } else if (is_record_list(json)) {
    write_record_table(json, out);
  } else if (json.is_object()) {
    write_record(json, out);
  } else {
    out << "<p>" << html_escape(json.dump()) << "</p>\n";
  }
}

}  // namespace

std::string html_escape(const std::string& text) {
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

void write_html_sections(const Report& report, std::ostream& out) {
  static const std::map<std::string, std::string> titles = {
      {"hardware", "Device"}, {"plan", "Capacity plan"}, {"plans", "Capacity plan per device"},
      {"comparison", "Devices side by side"}, {"groups", "Deployed kernels (fused groups)"}, {"by_module", "By module"}};
  bool several_plans = false;
  for (const auto& section : report.sections) several_plans = several_plans || section.name == "plans";
  // The short summaries first, the long lists (kernels, modules) after them.
  std::vector<const ReportSection*> ordered;
  for (const bool long_list : {false, true})
    for (const auto& section : report.sections)
      if ((section.name == "groups" || section.name == "by_module") == long_list) ordered.push_back(&section);
  for (const ReportSection* listed : ordered) {
    const ReportSection& section = *listed;
    const bool shown = section.print || (section.name == "plans");
    if (!shown || !section.json || (section.name == "plan" && several_plans)) continue;
    const Json json = section.json();
    if (json.is_null() || (json.is_array() && json.empty())) continue;
    auto it = titles.find(section.name);
    write_section(it == titles.end() ? title_of(section.name) : it->second, json, out);
  }
}

}  // namespace modelcost
