// A plain-text table with aligned columns, for the terminal report.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace modelcost {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  // max_width 0: no limit; longer cells keep their end ("...conv1/Conv"), where names differ.
  void add_column(std::string title, Align align, size_t max_width = 0);
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out, const std::string& indent = "  ") const;
  size_t rows() const { return rows_.size(); }

 private:
  struct Column {
    std::string title;
    Align align;
    size_t max_width;
  };
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text (code points; good enough for names and units).
size_t display_width(const std::string& text);

}  // namespace modelcost
