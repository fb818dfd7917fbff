// Loading the device files from the built-in, environment and --hwdb directories; resolving a
// device by id or alias; the --list-gpus listing.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "modelcost/errors.h"
#include "hardware/edit_distance.h"
#include "modelcost/hardware.h"

namespace modelcost {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Matching ignores case and the separators people type differently ("A100_SXM4", "a100 sxm4").
std::string normalise(const std::string& s) {
  std::string out;
  for (char c : lower(s)) out += (c == '_' || c == ' ') ? '-' : c;
  return out;
}

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

}  // namespace

void HardwareDb::add(Device device) {
  for (auto& existing : devices_) {
    if (normalise(existing.id) == normalise(device.id)) {
      // An override keeps the names users already type for the entry it replaces.
      for (const auto& a : existing.aliases)
        if (std::find(device.aliases.begin(), device.aliases.end(), a) == device.aliases.end()) device.aliases.push_back(a);
      existing = std::move(device);
      return;
    }
  }
  devices_.push_back(std::move(device));
}

void HardwareDb::load_dir(const std::string& dir) {
  std::error_code ec;
  // One device file (what `modelcost calibrate --out` writes) is a database of one.
  if (fs::is_regular_file(dir, ec) && fs::path(dir).extension() == ".toml") {
    add(load_device_file(dir));
    return;
  }
  if (!fs::is_directory(dir, ec))
    throw Error(kExitUnreadable, dir + ": no such hardware directory or device file (a directory of .toml files, or one .toml)");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.is_regular_file()) files.push_back(entry.path());
  if (ec) throw Error(kExitUnreadable, dir + ": cannot list hardware directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) add(load_device_file(f.string()));
}

const Device* HardwareDb::find(const std::string& query) const& {
  const std::string q = normalise(query);
  // Later entries win: a user's file overrides a shipped alias as well as a shipped id.
  for (auto it = devices_.rbegin(); it != devices_.rend(); ++it)
    if (normalise(it->id) == q) return &*it;
  for (auto it = devices_.rbegin(); it != devices_.rend(); ++it)
    for (const auto& a : it->aliases)
      if (normalise(a) == q) return &*it;
  return nullptr;
}

const Device& HardwareDb::resolve(const std::string& query) const& {
  if (const Device* d = find(query)) return *d;
  // Close matches: a shared substring, or a few edits away, of an id or alias.
  const std::string q = normalise(query);
  std::vector<std::pair<size_t, std::string>> ranked;
  for (const auto& d : devices_) {
    size_t best = std::string::npos;
    std::vector<std::string> names = d.aliases;
    names.push_back(d.id);
    for (const auto& n : names) {
      const std::string nn = normalise(n);
      size_t score = edit_distance(q, nn);
      if (!q.empty() && (nn.find(q) != std::string::npos || q.find(nn) != std::string::npos)) score = std::min<size_t>(score, 1);
      best = std::min(best, score);
    }
    if (best <= std::max<size_t>(2, q.size() / 3)) ranked.emplace_back(best, d.id);
  }
  std::sort(ranked.begin(), ranked.end());
  std::string hint;
  for (size_t i = 0; i < ranked.size() && i < 5; ++i) hint += (i ? ", " : "") + ranked[i].second;
  throw Error(kExitUsage, fmt::format("--gpu: unknown device '{}'{}; --list-gpus lists all {} known devices", query,
                                      hint.empty() ? "" : " (close matches: " + hint + ")", devices_.size()));
}

std::vector<std::string> builtin_hwdb_places() {
  std::vector<std::string> places;
  const std::string exe = executable_dir();
  if (!exe.empty()) places.push_back((fs::path(exe) / MODELCOST_HWDB_RELDIR).lexically_normal().string());
  // A binary of the build tree (modelcost, the tests) reads the source tree's files.
  const std::string build_dir = MODELCOST_BUILD_DIR;
  if (exe.compare(0, build_dir.size(), build_dir) == 0 && (exe.size() == build_dir.size() || exe[build_dir.size()] == '/'))
    places.push_back((fs::path(MODELCOST_SOURCE_DIR) / "hwdb").string());
  return places;
}

std::string builtin_hwdb_dir() {
  std::error_code ec;
  for (const auto& place : builtin_hwdb_places())
    if (fs::is_directory(place, ec)) return place;
  return "";
}

HardwareDb load_hardware_db(const std::vector<std::string>& extra_dirs, bool read_environment) {
  HardwareDb db;
  std::vector<std::string> looked;
  if (const std::string builtin = builtin_hwdb_dir(); !builtin.empty()) {
    db.load_dir(builtin);
    looked.push_back(builtin);
  } else {
    for (const auto& place : builtin_hwdb_places()) looked.push_back(place);
  }
  if (read_environment) {
    if (const char* env = std::getenv("MODELCOST_HWDB"); env && *env) {
      std::string list(env);
      size_t start = 0;
      while (start <= list.size()) {
        const size_t end = std::min(list.find(':', start), list.size());
        if (end > start) {
          db.load_dir(list.substr(start, end - start));
          looked.push_back("$MODELCOST_HWDB " + list.substr(start, end - start));
        }
        start = end + 1;
      }
    }
  }
  for (const auto& dir : extra_dirs) {
    db.load_dir(dir);
    looked.push_back("--hwdb " + dir);
  }
  if (db.devices().empty()) {
    std::string where;
    for (const auto& place : looked) where += (where.empty() ? "" : ", ") + place;
    throw Error(kExitUnreadable, "no hardware database: no device file (*.toml) in " + where +
                                     "; name a directory with --hwdb DIR or $MODELCOST_HWDB");
  }
  derive_missing_ceilings(db);
  return db;
}

std::string describe_resolution(const std::string& query, const Device& device) {
  if (normalise(query) == normalise(device.id)) return "";
  return fmt::format("'{}' is an alias of {} ({})", query, device.id, device.name);
}

std::string format_device_list(const HardwareDb& db) {
  std::vector<const Device*> sorted;
  for (const auto& d : db.devices()) sorted.push_back(&d);
  std::sort(sorted.begin(), sorted.end(), [](const Device* a, const Device* b) { return a->id < b->id; });
  auto peak = [](const Device& d, MathPath path, const std::string& dtype) {
    const double p = d.peak_flops(path, dtype);
    return p > 0 ? fmt::format("{:g}", p / 1e12) : std::string("-");
  };
  // Column widths follow the longest cell, so a user's long id or name keeps the columns aligned.
  std::vector<std::vector<std::string>> rows = {{"id", "name", "mem_GB", "bw_GB/s", "fp32", "tc_fp16", "tc_bf16", "tc_int8", "aliases"}};
  for (const Device* d : sorted) {
    std::string aliases;
    for (const auto& a : d->aliases) aliases += (aliases.empty() ? "" : ",") + a;
    rows.push_back({d->id, d->name, fmt::format("{:g}", d->memory_gb), fmt::format("{:g}", d->memory_bandwidth_gbps),
                    peak(*d, MathPath::kVector, "fp32"), peak(*d, MathPath::kTensor, "fp16"), peak(*d, MathPath::kTensor, "bf16"),
                    peak(*d, MathPath::kTensor, "int8"), aliases});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      if (c < 2) line += fmt::format("{:<{}} ", row[c], width[c]);  // names left-aligned
      else if (last) line += " " + row[c];
      else line += fmt::format("{:>{}} ", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace modelcost
