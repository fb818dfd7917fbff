// Number formatting shared by the printers: exact text for files, human units for the terminal.
#pragma once
#include <string>

#include "report/report.h"

namespace modelcost {

// Largest integer below which every integer is exactly representable as a double (2^53).
constexpr double kMaxExactInteger = 9007199254740992.0;

// Exact text of a figure for CSV: integral values below 2^53 as plain integers ("4089184256"),
// anything else as the shortest text that reads back to the same double ("9.903520314283042e+27").
// Non-finite values give "" (a figure that could not be computed).
std::string exact_number(double value);
// exact_number() appended to `out`, for writers that fill one buffer.
void append_exact_number(double value, std::string& out);
// The same rule for JSON: an integer, a double, or null for a non-finite value.
Json json_number(double value);

// Terminal forms.
std::string human_count(double value);  // "4.09 G", "25.5 M", "512"
std::string human_bytes(double value);  // "97.5 MB", "1.20 KB", "512 B" (1 KB = 1000 B)
std::string three_digits(double value);  // 3 significant digits, no exponent below 1e15
std::string human_share(double fraction);  // "12.3%"

// A cell in the terminal, according to the column's kind.
std::string terminal_text(const CellValue& cell, ColumnKind kind);
// A cell in a CSV file (unquoted; the CSV writer quotes).
std::string file_text(const CellValue& cell);
// A cell in JSON.
Json cell_json(const CellValue& cell);

}  // namespace modelcost
