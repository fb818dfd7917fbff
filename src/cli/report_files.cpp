#include "cli/report_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "modelcost/errors.h"

namespace modelcost {
namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

constexpr const char* kStdoutPath = "-";

void check_one(const std::string& option, const std::string& path, const CliOptions& options) {
  if (path.empty() || path == kStdoutPath) return;
  struct stat report {}, model {};
  if (stat(path.c_str(), &report) != 0) {
    // Not there yet: its folder must exist and take a new file, or the whole run would be lost.
    std::string folder = std::filesystem::path(path).parent_path().string();
    if (folder.empty()) folder = ".";
    struct stat dir {};
    if (stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
      throw Error(kExitUnreadable, path + ": cannot write report: no such directory '" + folder + "'");
    if (access(folder.c_str(), W_OK) != 0)
      throw Error(kExitUnreadable, path + ": cannot write report: " + std::strerror(errno));
    return;
  }
  if (S_ISDIR(report.st_mode)) throw Error(kExitUsage, path + ": " + option + " names a directory, not a file");
  if (stat(options.model_path.c_str(), &model) == 0 && same_file(report, model))
    throw Error(kExitUsage, path + ": " + option + " names the input model; refusing to overwrite it");
  if (access(path.c_str(), W_OK) != 0) throw Error(kExitUnreadable, path + ": cannot write report: " + std::strerror(errno));
}

}  // namespace

void check_report_paths(const CliOptions& options) {
  check_one("--csv", options.csv_path, options);
  check_one("--json", options.json_path, options);
  check_one("--roofline-svg", options.roofline_svg, options);
  check_one("--html", options.html_path, options);
  check_one("--groups-csv", options.groups_csv, options);
  check_one_stdout_report({{"--csv", options.csv_path}, {"--json", options.json_path}, {"--html", options.html_path},
                           {"--roofline-svg", options.roofline_svg}, {"--groups-csv", options.groups_csv}});
  if (!options.csv_path.empty() && !options.json_path.empty()) {
    struct stat csv {}, json {};
    const bool same = options.csv_path == options.json_path ||
                      (stat(options.csv_path.c_str(), &csv) == 0 && stat(options.json_path.c_str(), &json) == 0 &&
                       same_file(csv, json));
    if (same) throw Error(kExitUsage, options.csv_path + ": named by both --csv and --json");
  }
}

void check_one_stdout_report(const std::vector<std::pair<std::string, std::string>>& reports) {
  std::string first;
  for (const auto& [option, path] : reports) {
    if (path != kStdoutPath) continue;
    if (!first.empty())
      throw Error(kExitUsage, first + " - and " + option + " - both name standard output; send one of them to a file");
    first = option;
  }
}

bool report_to_stdout(const CliOptions& options) {
  for (const std::string* path : {&options.csv_path, &options.json_path, &options.html_path, &options.roofline_svg,
                                  &options.groups_csv})
    if (*path == kStdoutPath) return true;
  return false;
}

void emit_report(const std::string& path, const std::string& contents, std::ostream& stdout_stream) {
  if (path != kStdoutPath) return write_report_file(path, contents);
  stdout_stream.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  stdout_stream.flush();
  if (!stdout_stream) throw Error(kExitUnreadable, "cannot write the report to standard output");
}

void write_report_file(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw Error(kExitUnreadable, path + ": cannot write report: " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      throw Error(kExitUnreadable, path + ": cannot write report: " + std::strerror(n < 0 ? error : ENOSPC));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw Error(kExitUnreadable, path + ": cannot write report: " + std::strerror(errno));
}

}  // namespace modelcost
