// Where the CLI writes report files: checked before the analysis runs (never the input model,
// never a directory), written whole after it succeeds. The path "-" means standard output.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/options.h"

namespace modelcost {

// Throws Error(kExitUsage) naming the report file when --csv/--json is the model itself (same
// inode, however it is spelled), both name one file (or both are "-"), or a path is a directory.
void check_report_paths(const CliOptions& options);
// Throws Error(kExitUsage) when more than one of the (option, path) reports is "-".
void check_one_stdout_report(const std::vector<std::pair<std::string, std::string>>& reports);
// True when a report (--csv, --json, --html, --roofline-svg, --groups-csv) is "-": it takes stdout
// and the terminal table is left out.
bool report_to_stdout(const CliOptions& options);
// Writes `contents` to `path`, or to `stdout` when the path is "-".
void emit_report(const std::string& path, const std::string& contents, std::ostream& stdout_stream);
// Writes `contents` to `path`, replacing it; throws Error(kExitUnreadable) naming the file.
void write_report_file(const std::string& path, const std::string& contents);

}  // namespace modelcost
