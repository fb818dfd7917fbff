// The terminal report: header, totals, extra sections, the heaviest nodes, the per-op-type
// summary and the warnings. Human units (4.09 G, 97.5 MB) appear here only.
#pragma once
#include <cstddef>
#include <ostream>

#include "report/report.h"

namespace modelcost {

struct TableOptions {
  size_t top = 15;             // heaviest nodes shown (--top); also op types shown without --by-op
  bool all_op_types = false;   // --by-op: every op type, not only the first `top`
};

void print_table(const Report& report, const TableOptions& options, std::ostream& out);

}  // namespace modelcost
