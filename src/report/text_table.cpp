#include "report/text_table.h"

#include <algorithm>
#include <sstream>

namespace modelcost {

size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char ch : text)
    if ((ch & 0xC0) != 0x80) ++width;  // count lead bytes only
  return width;
}

namespace {

// Keeps the last max_width display columns, marking the cut with "...".
std::string clip(const std::string& text, size_t max_width) {
  if (max_width == 0 || display_width(text) <= max_width || max_width <= 3) return text;
  size_t keep = max_width - 3;
  size_t start = text.size();
  while (start > 0 && keep > 0) {
    --start;
    if ((static_cast<unsigned char>(text[start]) & 0xC0) != 0x80) --keep;
  }
  return "..." + text.substr(start);
}

void pad(std::ostream& out, const std::string& text, size_t width, TextTable::Align align) {
  const size_t w = display_width(text);
  const std::string fill(width > w ? width - w : 0, ' ');
  if (align == TextTable::Align::kRight) out << fill << text;
  else out << text << fill;
}

}  // namespace

void TextTable::add_column(std::string title, Align align, size_t max_width) {
  columns_.push_back({std::move(title), align, max_width});
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    // A name from the file may hold line breaks or tabs; one row stays one line.
    for (char& ch : cells[c])
      if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    cells[c] = clip(cells[c], columns_[c].max_width);
  }
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> widths;
  for (const auto& c : columns_) widths.push_back(display_width(c.title));
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::ostringstream line;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) line << "  ";
      pad(line, cells[c], widths[c], columns_[c].align);
    }
    std::string text = line.str();
    text.erase(text.find_last_not_of(' ') + 1);  // no trailing blanks after empty last cells
    out << indent << text << "\n";
  };
  std::vector<std::string> titles;
  for (const auto& c : columns_) titles.push_back(c.title);
  print_row(titles);
  for (const auto& row : rows_) print_row(row);
}

}  // namespace modelcost
