// Reads one hwdb/*.toml device file with toml++ into a Device; the schema is docs/hwdb.md.
// Unknown keys are errors so that a misspelt figure never silently goes missing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "modelcost/errors.h"
#include "modelcost/hardware.h"

namespace modelcost {
namespace {

class DeviceReader {
 public:
  DeviceReader(const toml::table& root, const std::string& origin) : root_(root), origin_(origin) {}
  Device read();

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(kExitInvalidModel, fmt::format("hardware file '{}': {}", origin_, message));
  }
  std::string string_key(const toml::table& t, const std::string& key, bool required) const;
  std::optional<double> number_key(const toml::table& t, const std::string& key, const std::string& path) const;
  void read_peaks(Device& d) const;
  void read_peak_table(const toml::node& node, const std::string& prefix, std::map<std::string, double>& out) const;
  void read_achievable(Device& d) const;
  void read_kernel_curves(const toml::node& node, AchievableCeilings& a) const;
  void read_allreduce_curves(const toml::node& node, AllReduceCurves& curves) const;
  AllReduceCurve read_allreduce_curve(const toml::node& node) const;
  void read_documents(Device& d) const;
  void read_sources(Device& d) const;
  void read_interconnect(Device& d) const;

  const toml::table& root_;
  std::string origin_;
};

std::string DeviceReader::string_key(const toml::table& t, const std::string& key, bool required) const {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) fail("missing required key '" + key + "'");
    return "";
  }
  if (!n->is_string()) fail("'" + key + "' must be a string");
  return **n->as_string();
}

std::optional<double> DeviceReader::number_key(const toml::table& t, const std::string& key, const std::string& path) const {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  if (auto i = n->as_integer()) return static_cast<double>(**i);
  if (auto f = n->as_floating_point()) return **f;
  fail("'" + path + "' must be a number");
}

void DeviceReader::read_peaks(Device& d) const {
  const toml::node* peak = root_.get("peak");
  if (!peak) return;
  if (!peak->is_table()) fail("'peak' must be a table with [peak.vector] and [peak.tensor]");
  const std::set<std::string> dtypes(peak_dtype_names().begin(), peak_dtype_names().end());
  for (const auto& [path_key, path_node] : *peak->as_table()) {
    const std::string path(path_key.str());
    if (path != "vector" && path != "tensor") fail("unknown math path 'peak." + path + "' (expected vector or tensor)");
    read_peak_table(path_node, "peak." + path, path == "vector" ? d.vector_tflops : d.tensor_tflops);
  }
}

void DeviceReader::read_peak_table(const toml::node& node, const std::string& prefix, std::map<std::string, double>& out) const {
  static const std::set<std::string> dtypes(peak_dtype_names().begin(), peak_dtype_names().end());
  if (!node.is_table()) fail("'" + prefix + "' must be a table");
  for (const auto& [dtype_key, value] : *node.as_table()) {
    const std::string dtype(dtype_key.str());
    const std::string full = prefix + "." + dtype;
    if (!dtypes.count(dtype)) fail("unknown dtype '" + full + "' (expected one of fp64 fp32 tf32 fp16 bf16 fp8 int8 int4)");
    out[dtype] = *number_key(*node.as_table(), dtype, full);
  }
}

// [achievable]: memory_bandwidth_gbps, kernel_overhead_us, kernel_gap_us, library_gap_us,
// in_graph_work_scale, attention_load_scale, [achievable.vector], [achievable.tensor].
void DeviceReader::read_achievable(Device& d) const {
  const toml::node* node = root_.get("achievable");
  if (!node) return;
  if (!node->is_table()) fail("'achievable' must be a table");
  const toml::table& t = *node->as_table();
  AchievableCeilings& a = d.achievable;
  for (const auto& [key, value] : t) {
    const std::string k(key.str());
    if (k == "vector" || k == "tensor") {
      read_peak_table(value, "achievable." + k, k == "vector" ? a.vector_tflops : a.tensor_tflops);
    } else if (k == "kernels") {
      read_kernel_curves(value, a);
    } else if (k == "memory_bandwidth_gbps" || k == "kernel_overhead_us" || k == "kernel_gap_us" || k == "library_gap_us" ||
               k == "in_graph_work_scale" || k == "attention_load_scale") {
      const double v = *number_key(t, k, "achievable." + k);
      (k == "memory_bandwidth_gbps" ? a.memory_bandwidth_gbps
       : k == "kernel_overhead_us"  ? a.kernel_overhead_us
       : k == "kernel_gap_us"       ? a.kernel_gap_us
       : k == "library_gap_us"      ? a.library_gap_us
       : k == "in_graph_work_scale" ? a.in_graph_work_scale
                                    : a.attention_load_scale) = v;
    } else {
      fail("unknown key 'achievable." + k + "'");
    }
  }
}

// [achievable.kernels]: one inline table per kernel class:
// { fixed_us = N, k_us_per_1000 = N, tflops = N, gbps = N, knee = N, k_half = N } (all but
// fixed_us and gbps optional).
void DeviceReader::read_kernel_curves(const toml::node& node, AchievableCeilings& a) const {
  if (!node.is_table()) fail("'achievable.kernels' must be a table");
  const auto& names = kernel_class_names();
  for (const auto& [key, value] : *node.as_table()) {
    const std::string k(key.str()), path = "achievable.kernels." + k;
    if (std::find(names.begin(), names.end(), k) == names.end())
      fail("unknown kernel class '" + path + "' (expected a kernel class such as gemm, conv, pointwise or layout_copy, or a decode_ class)");
    if (!value.is_table()) fail("'" + path + "' must be a table { fixed_us, k_us_per_1000, tflops, gbps }");
    const toml::table& c = *value.as_table();
    KernelCurve curve;
    for (const auto& [field_key, unused] : c) {
      const std::string field(field_key.str());
      double* target = field == "fixed_us" ? &curve.fixed_us : field == "k_us_per_1000" ? &curve.k_us_per_1000
                       : field == "tflops" ? &curve.tflops : field == "gbps" ? &curve.gbps
                       : field == "knee" ? &curve.knee : field == "k_half" ? &curve.k_half : nullptr;
      if (!target) fail("unknown key '" + path + "." + field + "'");
      *target = *number_key(c, field, path + "." + field);
    }
    if (!(curve.fixed_us > 0) || !(curve.gbps > 0)) fail("'" + path + "' needs fixed_us and gbps above 0");
    a.kernel_curves[k] = curve;
  }
}

void DeviceReader::read_documents(Device& d) const {
  const toml::node* docs = root_.get("documents");
  if (!docs) return;
  if (!docs->is_table()) fail("'documents' must be a table of {title, url}");
  for (const auto& [key, node] : *docs->as_table()) {
    const std::string name(key.str());
    if (!node.is_table()) fail("'documents." + name + "' must be a table {title = ..., url = ...}");
    const toml::table& t = *node.as_table();
    for (const auto& [k, v] : t)
      if (k.str() != "title" && k.str() != "url") fail("unknown key 'documents." + name + "." + std::string(k.str()) + "'");
    d.documents[name] = SourceDocument{string_key(t, "title", false), string_key(t, "url", false)};
  }
}

// [interconnect]: the link figures tensor parallelism prices its all-reduces with, and the node's
// size and network that pipelines over several nodes send their activations through.
void DeviceReader::read_interconnect(Device& d) const {
  static const std::set<std::string> keys = {"nvlink_gbps",           "nvlink_latency_us",  "pcie_gbps",
                                             "pcie_latency_us",       "allreduce_bus_gbps", "allreduce_latency_us",
                                             "infiniband_gbps",       "infiniband_latency_us", "node_gpus"};
  const toml::node* table = root_.get("interconnect");
  if (!table) return;
  if (!table->is_table()) fail("'interconnect' must be a table of link figures");
  for (const auto& [key, value] : *table->as_table()) {
    const std::string name(key.str());
    if (name == "allreduce_curve") {
      read_allreduce_curves(value, d.allreduce_curves);
      continue;
    }
    if (!keys.count(name)) fail("unknown key 'interconnect." + name + "'");
    d.interconnect[name] = *number_key(*table->as_table(), name, "interconnect." + name);
  }
}

// allreduce_curve = one curve, or an array of them over different GPU counts (each count once).
void DeviceReader::read_allreduce_curves(const toml::node& node, AllReduceCurves& curves) const {
  if (const toml::array* list = node.as_array()) {
    for (const toml::node& each : *list) curves.by_ranks.push_back(read_allreduce_curve(each));
  } else {
    curves.by_ranks.push_back(read_allreduce_curve(node));
  }
  std::sort(curves.by_ranks.begin(), curves.by_ranks.end(),
            [](const AllReduceCurve& a, const AllReduceCurve& b) { return a.ranks < b.ranks; });
  for (size_t i = 1; i < curves.by_ranks.size(); ++i)
    if (curves.by_ranks[i].ranks == curves.by_ranks[i - 1].ranks)
      fail(fmt::format("'interconnect.allreduce_curve' has two curves over {} GPUs", curves.by_ranks[i].ranks));
}

// { ranks = N, bytes = [...], us = [...] }: sizes ascending, times positive.
AllReduceCurve DeviceReader::read_allreduce_curve(const toml::node& node) const {
  const std::string where = "interconnect.allreduce_curve";
  AllReduceCurve curve;
  if (!node.is_table()) fail("'" + where + "' must be an inline table { ranks, bytes, us } or an array of them");
  const toml::table& t = *node.as_table();
  for (const auto& [k, v] : t)
    if (k.str() != "ranks" && k.str() != "bytes" && k.str() != "us") fail("unknown key '" + where + "." + std::string(k.str()) + "'");
  const double ranks = *number_key(t, "ranks", where + ".ranks");
  auto numbers = [&](const char* key) {
    const toml::array* a = t[key].as_array();
    if (!a) fail("'" + where + "." + key + "' must be an array of numbers");
    std::vector<double> out;
    for (const auto& e : *a) {
      const std::optional<double> v = e.value<double>();
      if (!v || !std::isfinite(*v) || *v <= 0) fail("'" + where + "." + key + "' must hold positive numbers");
      out.push_back(*v);
    }
    return out;
  };
  const std::vector<double> bytes = numbers("bytes"), us = numbers("us");
  if (ranks < 2 || ranks != std::floor(ranks)) fail("'" + where + ".ranks' must be a whole number of at least 2");
  if (bytes.size() != us.size() || bytes.size() < 2) fail("'" + where + "' needs as many times as sizes, at least two");
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i && bytes[i] <= bytes[i - 1]) fail("'" + where + ".bytes' must ascend");
    curve.bytes_us.emplace_back(bytes[i], us[i]);
  }
  curve.ranks = static_cast<int64_t>(ranks);
  return curve;
}

void DeviceReader::read_sources(Device& d) const {
  const toml::node* sources = root_.get("sources");
  if (!sources) return;
  if (!sources->is_table()) fail("'sources' must be a table: figure key -> document key or {doc, derived, sparse_figure, note}");
  for (const auto& [key, node] : *sources->as_table()) {
    const std::string figure(key.str());
    FigureSource s;
    if (node.is_string()) {
      s.document = **node.as_string();
    } else if (node.is_table()) {
      const toml::table& t = *node.as_table();
      for (const auto& [k, v] : t) {
        const std::string_view kk = k.str();
        if (kk != "doc" && kk != "derived" && kk != "sparse_figure" && kk != "note")
          fail("unknown key 'sources." + figure + "." + std::string(kk) + "'");
      }
      s.document = string_key(t, "doc", true);
      if (const toml::node* derived = t.get("derived")) {
        if (!derived->is_boolean()) fail("'sources." + figure + ".derived' must be true or false");
        s.derived = **derived->as_boolean();
      }
      s.sparse_figure = number_key(t, "sparse_figure", "sources." + figure + ".sparse_figure").value_or(0);
      s.note = string_key(t, "note", false);
    } else {
      fail("'sources." + figure + "' must be a document key or a table");
    }
    d.sources[figure] = s;
  }
}

Device DeviceReader::read() {
  static const std::set<std::string> known = {
      "id", "aliases", "name", "vendor", "architecture", "kind", "sm_count", "cu_count", "cores",
      "boost_clock_mhz", "memory_gb", "memory_bandwidth_gbps", "l2_mb", "l3_mb", "tdp_w", "launch_overhead_us",
      "price_per_hour_usd", "peak", "achievable", "documents", "sources", "notes", "interconnect"};
  for (const auto& [key, node] : root_)
    if (!known.count(std::string(key.str()))) fail("unknown key '" + std::string(key.str()) + "'");

  Device d;
  d.origin = origin_;
  d.id = string_key(root_, "id", true);
  d.name = string_key(root_, "name", true);
  d.vendor = string_key(root_, "vendor", true);
  d.architecture = string_key(root_, "architecture", true);
  d.kind = string_key(root_, "kind", true);
  if (const toml::node* aliases = root_.get("aliases")) {
    if (!aliases->is_array()) fail("'aliases' must be an array of strings");
    for (const auto& a : *aliases->as_array()) {
      if (!a.is_string()) fail("'aliases' must be an array of strings");
      d.aliases.push_back(**a.as_string());
    }
  }
  int unit_keys = 0;
  for (const char* key : {"sm_count", "cu_count", "cores"}) {
    if (auto v = number_key(root_, key, key)) {
      d.compute_units = *v;
      d.compute_unit_name = key;
      ++unit_keys;
    }
  }
  if (unit_keys > 1) fail("give only one of sm_count, cu_count, cores");
  d.boost_clock_mhz = number_key(root_, "boost_clock_mhz", "boost_clock_mhz").value_or(0);
  d.memory_gb = number_key(root_, "memory_gb", "memory_gb").value_or(0);
  d.memory_bandwidth_gbps = number_key(root_, "memory_bandwidth_gbps", "memory_bandwidth_gbps").value_or(0);
  d.l2_mb = number_key(root_, "l2_mb", "l2_mb").value_or(0);
  d.l3_mb = number_key(root_, "l3_mb", "l3_mb").value_or(0);
  d.tdp_w = number_key(root_, "tdp_w", "tdp_w").value_or(0);
  auto launch = number_key(root_, "launch_overhead_us", "launch_overhead_us");
  if (!launch) fail("missing required key 'launch_overhead_us'");
  d.launch_overhead_us = *launch;
  d.price_per_hour_usd = number_key(root_, "price_per_hour_usd", "price_per_hour_usd");
  read_peaks(d);
  read_achievable(d);
  read_documents(d);
  read_sources(d);
  read_interconnect(d);
  return d;
}

}  // namespace

Device parse_device_toml(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw Error(kExitInvalidModel, fmt::format("hardware file '{}': line {}, column {}: {}", origin, begin.line,
                                               begin.column, e.description()));
  }
  return DeviceReader(root, origin).read();
}

Device load_device_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(kExitUnreadable, "cannot read hardware file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_device_toml(text.str(), path);
}

}  // namespace modelcost
