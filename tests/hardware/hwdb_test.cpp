#include <gtest/gtest.h>

#include <cmath>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "modelcost/errors.h"
#include "modelcost/hardware.h"

namespace modelcost::testing {
namespace fs = std::filesystem;

namespace {

HardwareDb shipped() { return load_hardware_db({}, /*read_environment=*/false); }

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fs::path("modelcost-hwdb-" + std::to_string(::getpid()) + "-" +
                                                std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
};

// A minimal valid entry; tests edit one line of it at a time.
std::string minimal_entry(const std::string& id = "test-gpu", const std::string& extra_peaks = "") {
  return "id = \"" + id + "\"\n"
         "aliases = [\"tg\"]\n"
         "name = \"Test GPU\"\nvendor = \"Nobody\"\narchitecture = \"Paper\"\nkind = \"gpu\"\n"
         "sm_count = 10\nboost_clock_mhz = 1000\nmemory_gb = 8\nmemory_bandwidth_gbps = 500\ntdp_w = 100\n"
         "launch_overhead_us = 2\n"
         "[peak.vector]\nfp32 = 2.56\n"
         "[peak.tensor]\nfp16 = 20\n" + extra_peaks +
         "[documents]\nds = { title = \"Test datasheet\", url = \"https://example.com/ds.pdf\" }\n"
         "[sources]\nsm_count = \"ds\"\nboost_clock_mhz = \"ds\"\nmemory_gb = \"ds\"\nmemory_bandwidth_gbps = \"ds\"\n"
         "tdp_w = \"ds\"\nlaunch_overhead_us = { doc = \"ds\", derived = true, note = \"estimate\" }\n"
         "\"peak.vector.fp32\" = \"ds\"\n\"peak.tensor.fp16\" = \"ds\"\n";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

bool mentions(const std::vector<std::string>& problems, const std::string& fragment) {
  for (const auto& p : problems)
    if (p.find(fragment) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(HardwareDb, ShipsEveryRequiredDevice) {
  const HardwareDb db = shipped();
  const std::set<std::string> required = {
      "v100-sxm2-32gb", "t4", "a10", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie",
      "h200", "l4", "l40s", "rtx-3090", "rtx-4090", "b200", "gh200-96gb", "jetson-agx-orin-64gb", "mi300x", "epyc-9654"};
  std::set<std::string> ids;
  for (const auto& d : db.devices()) ids.insert(d.id);
  for (const auto& id : required) EXPECT_TRUE(ids.count(id)) << id;
  bool has_cpu = false;
  for (const auto& d : db.devices()) has_cpu = has_cpu || (d.kind == "cpu" && d.architecture.find("Zen") == 0);
  EXPECT_TRUE(has_cpu);
}

TEST(HardwareDb, EveryShippedEntryValidates) {
  const HardwareDb db = shipped();
  ASSERT_GE(db.devices().size(), 18u);
  for (const auto& d : db.devices()) {
    const auto problems = validate_device(d);
    std::string all;
    for (const auto& p : problems) all += p + "\n";
    EXPECT_TRUE(problems.empty()) << all;
    // Every figure has a source: validate_device checks it; this guards the check itself.
    for (const auto& [key, value] : device_figures(d)) EXPECT_TRUE(d.sources.count(key)) << d.id << " " << key;
  }
}

TEST(HardwareDb, IdsAndAliasesAreUnique) {
  std::set<std::string> names;
  const HardwareDb db = shipped();
  for (const auto& d : db.devices()) {
    EXPECT_TRUE(names.insert(d.id).second) << d.id;
    for (const auto& a : d.aliases) EXPECT_TRUE(names.insert(a).second) << a << " of " << d.id;
  }
}

// Dense figures from the vendors' tables; the with-sparsity figure is twice each of these.
TEST(HardwareDb, ShippedPeaksAreDenseNotSparse) {
  const HardwareDb db = shipped();
  EXPECT_DOUBLE_EQ(db.resolve("a100-sxm4-80gb").tensor_tflops.at("fp16"), 312);
  EXPECT_DOUBLE_EQ(db.resolve("a100-sxm4-80gb").tensor_tflops.at("tf32"), 156);
  EXPECT_DOUBLE_EQ(db.resolve("h100-sxm").tensor_tflops.at("fp16"), 989.4);
  EXPECT_DOUBLE_EQ(db.resolve("h100-sxm").tensor_tflops.at("fp8"), 1978.9);
  EXPECT_DOUBLE_EQ(db.resolve("h100-pcie").tensor_tflops.at("fp16"), 756.5);
  EXPECT_DOUBLE_EQ(db.resolve("h200").tensor_tflops.at("fp8"), 1979);
  EXPECT_DOUBLE_EQ(db.resolve("l4").tensor_tflops.at("fp16"), 121);
  EXPECT_DOUBLE_EQ(db.resolve("b200").tensor_tflops.at("bf16"), 2250);
  EXPECT_DOUBLE_EQ(db.resolve("gh200-96gb").tensor_tflops.at("int8"), 1979);
  EXPECT_DOUBLE_EQ(db.resolve("jetson-agx-orin-64gb").tensor_tflops.at("int8"), 85);
  EXPECT_DOUBLE_EQ(db.resolve("mi300x").tensor_tflops.at("fp16"), 1307.4);
  EXPECT_DOUBLE_EQ(db.resolve("l40s").tensor_tflops.at("fp8"), 733);
}

TEST(HardwareDb, ResolvesAliasesCaseInsensitively) {
  const HardwareDb db = shipped();
  EXPECT_EQ(db.resolve("a100").id, "a100-sxm4-80gb");
  EXPECT_EQ(db.resolve("A100").id, "a100-sxm4-80gb");
  EXPECT_EQ(db.resolve("H100").id, "h100-sxm");
  EXPECT_EQ(db.resolve("A100_SXM4_40GB").id, "a100-sxm4-40gb");
  EXPECT_EQ(db.resolve("gh200").id, "gh200-96gb");
  EXPECT_EQ(db.resolve("cpu").kind, "cpu");
  EXPECT_EQ(describe_resolution("a100", db.resolve("a100")), "'a100' is an alias of a100-sxm4-80gb (A100 SXM4 80GB)");
  EXPECT_EQ(describe_resolution("a100-sxm4-80gb", db.resolve("a100-sxm4-80gb")), "");
}

TEST(HardwareDb, UnknownDeviceListsCloseMatches) {
  const HardwareDb db = shipped();
  try {
    db.resolve("a1000");
    FAIL() << "resolved an unknown device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUsage);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown device 'a1000'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a100-sxm4-80gb"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("mi300x"), std::string::npos) << msg;
  }
  try {
    db.resolve("h100-sxm6");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("h100-sxm"), std::string::npos) << e.what();
  }
}

TEST(HardwareDb, LaterDirectoriesOverrideByIdAndAlias) {
  TempDir dir;
  dir.write("mine.toml", replace(minimal_entry("a100-sxm4-80gb"), "name = \"Test GPU\"", "name = \"My A100\""));
  dir.write("other.toml", replace(minimal_entry("my-h100"), "aliases = [\"tg\"]", "aliases = [\"h100\"]"));
  dir.write("README.md", "not a device file");
  const HardwareDb db = load_hardware_db({dir.path.string()}, false);
  EXPECT_EQ(db.resolve("a100").name, "My A100");  // an override inherits the aliases it replaces
  EXPECT_EQ(db.resolve("a100-sxm4-80gb").name, "My A100");
  EXPECT_EQ(db.resolve("h100").id, "my-h100");     // a later file's alias wins over a shipped alias
  EXPECT_EQ(db.resolve("h100-sxm").id, "h100-sxm");
  EXPECT_EQ(db.devices().size(), shipped().devices().size() + 1);
}

TEST(HardwareDb, ReadsTheEnvironmentVariable) {
  TempDir a, b;
  a.write("x.toml", minimal_entry("env-gpu-a"));
  b.write("y.toml", minimal_entry("env-gpu-b"));
  ::setenv("MODELCOST_HWDB", (a.path.string() + ":" + b.path.string()).c_str(), 1);
  const HardwareDb db = load_hardware_db({}, true);
  ::unsetenv("MODELCOST_HWDB");
  EXPECT_NE(db.find("env-gpu-a"), nullptr);
  EXPECT_NE(db.find("env-gpu-b"), nullptr);
  const HardwareDb environment_read = load_hardware_db({}, true);
  EXPECT_EQ(environment_read.find("env-gpu-a"), nullptr);
}

TEST(HardwareDb, BadDirectoriesAndFilesAreErrors) {
  try {
    load_hardware_db({"/nonexistent/hwdb"}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnreadable);
  }
  TempDir dir;
  dir.write("broken.toml", "id = \"x\"\nname = [unclosed\n");
  try {
    load_hardware_db({dir.path.string()}, false);
    FAIL();
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken.toml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
  }
}

TEST(HardwareDb, ParserRejectsUnknownKeysAndMissingFields) {
  EXPECT_NO_THROW(parse_device_toml(minimal_entry(), "t.toml"));
  EXPECT_THROW(parse_device_toml(minimal_entry() + "memory_gbs = 3\n", "t.toml"), Error);  // misspelt key
  EXPECT_THROW(parse_device_toml(replace(minimal_entry(), "fp32 = 2.56", "fp33 = 2.56"), "t.toml"), Error);
  EXPECT_THROW(parse_device_toml(replace(minimal_entry(), "launch_overhead_us = 2\n", ""), "t.toml"), Error);
  EXPECT_THROW(parse_device_toml(replace(minimal_entry(), "memory_gb = 8", "memory_gb = \"8\""), "t.toml"), Error);
  const Device d = parse_device_toml(minimal_entry(), "t.toml");
  EXPECT_EQ(d.compute_unit_name, "sm_count");
  EXPECT_DOUBLE_EQ(d.compute_units, 10);
  EXPECT_DOUBLE_EQ(d.peak_flops(MathPath::kTensor, "fp16"), 20e12);
  EXPECT_DOUBLE_EQ(d.peak_flops(MathPath::kTensor, "bf16"), 0);
  EXPECT_TRUE(d.sources.at("launch_overhead_us").derived);
  EXPECT_TRUE(validate_device(d).empty());
}

TEST(HardwareDb, ValidationCatchesEachKindOfProblem) {
  auto problems = [](const std::string& text) { return validate_device(parse_device_toml(text, "t.toml")); };
  // A figure without a source.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "tdp_w = \"ds\"\n", "")), "'tdp_w' has no entry"));
  // A source naming a document that does not exist, and a document without a URL.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "tdp_w = \"ds\"", "tdp_w = \"nope\"")), "'nope'"));
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "url = \"https://example.com/ds.pdf\"", "url = \"\"")),
                       "needs a title and an http"));
  // A derived figure without a note.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), ", note = \"estimate\"", "")), "needs a note"));
  // A halved sparse figure that is not half, or not marked derived.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "\"peak.tensor.fp16\" = \"ds\"",
                                        "\"peak.tensor.fp16\" = { doc = \"ds\", derived = true, sparse_figure = 20, note = \"halved\" }")),
                       "not half"));
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "\"peak.tensor.fp16\" = \"ds\"",
                                        "\"peak.tensor.fp16\" = { doc = \"ds\", sparse_figure = 40 }")),
                       "must be marked derived"));
  // Tensor peak below the vector peak of the same dtype.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "fp32 = 2.56\n", "fp32 = 2.56\nfp16 = 25\n") +
                                "\"peak.vector.fp16\" = \"ds\"\n"),
                       "below peak.vector.fp16"));
  // Physically impossible per-SM rate (10 SMs at 1 GHz cannot do 200 TFLOP/s of fp16).
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "fp16 = 20\n", "fp16 = 200\n")), "above the physical bound"));
  // Absolute bounds and non-positive figures.
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "memory_bandwidth_gbps = 500", "memory_bandwidth_gbps = 500000")),
                       "sanity bound"));
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "tdp_w = 100", "tdp_w = -5")), "tdp_w must be above 0"));
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "kind = \"gpu\"", "kind = \"tpu\"")), "kind must be"));
  EXPECT_TRUE(mentions(problems(replace(minimal_entry(), "launch_overhead_us = 2", "launch_overhead_us = 0")),
                       "launch_overhead_us must be above 0"));
  EXPECT_TRUE(mentions(problems(minimal_entry() + "\"peak.tensor.fp8\" = \"ds\"\n"), "not a figure of this entry"));
}

TEST(HardwareDb, AchievableCeilingsParseAndValidate) {
  auto problems = [](const std::string& text) { return validate_device(parse_device_toml(text, "t.toml")); };
  const std::string achievable =
      "[achievable]\nmemory_bandwidth_gbps = 420\nkernel_overhead_us = 2.5\nkernel_gap_us = 0.8\n"
      "[achievable.tensor]\nfp16 = 16\n";
  const std::string sources =
      "\"achievable.memory_bandwidth_gbps\" = \"cal\"\n\"achievable.kernel_overhead_us\" = \"cal\"\n"
      "\"achievable.kernel_gap_us\" = \"cal\"\n"
      "\"achievable.tensor.fp16\" = { doc = \"cal\", derived = true, note = \"80% of the datasheet\" }\n";
  std::string text = replace(minimal_entry(), "[documents]\n", achievable + "[documents]\ncal = { title = \"calibrate\", url = \"docs/validation.md\" }\n") + sources;
  const Device d = parse_device_toml(text, "t.toml");
  EXPECT_DOUBLE_EQ(d.achievable.memory_bandwidth_gbps, 420);
  EXPECT_DOUBLE_EQ(d.achievable.kernel_overhead_us, 2.5);
  EXPECT_DOUBLE_EQ(d.achievable.kernel_gap_us, 0.8);
  EXPECT_DOUBLE_EQ(d.achievable_flops(MathPath::kTensor, "fp16"), 16e12);
  EXPECT_TRUE(validate_device(d).empty()) << validate_device(d).front();
  // Above the datasheet, without a datasheet figure beside it, or without a source: each is a problem.
  EXPECT_TRUE(mentions(problems(replace(text, "fp16 = 16\n", "fp16 = 25\n")), "is above the datasheet"));
  EXPECT_TRUE(mentions(problems(replace(text, "[achievable.tensor]\nfp16 = 16", "[achievable.tensor]\nfp8 = 16")),
                       "has no datasheet peak.tensor.fp8"));
  EXPECT_TRUE(mentions(problems(replace(text, "\"achievable.kernel_gap_us\" = \"cal\"\n", "")),
                       "'achievable.kernel_gap_us' has no entry in [sources]"));
  EXPECT_THROW(parse_device_toml(replace(text, "kernel_gap_us = 0.8", "kernel_gaps_us = 0.8"), "t.toml"), Error);
  // The entry with one more [achievable] figure after kernel_gap_us, sourced as it is.
  const auto with_figure = [&](const std::string& key, const std::string& value) {
    return replace(replace(text, "kernel_gap_us = 0.8\n", "kernel_gap_us = 0.8\n" + key + " = " + value + "\n"),
                   "\"achievable.kernel_gap_us\" = \"cal\"\n",
                   "\"achievable.kernel_gap_us\" = \"cal\"\n\"achievable." + key + "\" = \"cal\"\n");
  };
  // The in-graph work scale: read, sourced, and a stretch of at most 2x.
  const std::string scaled = with_figure("in_graph_work_scale", "1.1");
  EXPECT_DOUBLE_EQ(parse_device_toml(scaled, "t.toml").achievable.in_graph_work_scale, 1.1);
  EXPECT_TRUE(problems(scaled).empty()) << problems(scaled).front();
  EXPECT_TRUE(mentions(problems(replace(scaled, "in_graph_work_scale = 1.1", "in_graph_work_scale = 0.9")), "outside [1, 2]"));
  // The attention's slowdown between compute-bound products: read, sourced, at least 1 and at most 2.
  const std::string loaded = with_figure("attention_load_scale", "1.25");
  EXPECT_DOUBLE_EQ(parse_device_toml(loaded, "t.toml").achievable.attention_load_scale, 1.25);
  EXPECT_TRUE(problems(loaded).empty()) << problems(loaded).front();
  EXPECT_TRUE(mentions(problems(replace(loaded, "attention_load_scale = 1.25", "attention_load_scale = 2.5")), "outside [1, 2]"));
  EXPECT_TRUE(mentions(problems(replace(loaded, "\"achievable.attention_load_scale\" = \"cal\"\n", "")),
                       "'achievable.attention_load_scale' has no entry in [sources]"));
  // The library gap: read, sourced, under 1000 us.
  const std::string gapped = with_figure("library_gap_us", "0.25");
  EXPECT_DOUBLE_EQ(parse_device_toml(gapped, "t.toml").achievable.library_gap_us, 0.25);
  EXPECT_TRUE(problems(gapped).empty()) << problems(gapped).front();
  EXPECT_TRUE(mentions(problems(replace(gapped, "library_gap_us = 0.25", "library_gap_us = 5000")), "under 1000 us"));
}

TEST(HardwareDb, KernelCurvesParseAndValidate) {
  auto problems = [](const std::string& text) { return validate_device(parse_device_toml(text, "t.toml")); };
  const std::string kernels =
      "[achievable.kernels]\ngemm = { fixed_us = 4.2, k_us_per_1000 = 0.7, tflops = 15, gbps = 900 }\n"
      "pointwise = { fixed_us = 3, gbps = 450 }\n";
  const std::string sources = "\"achievable.kernels.gemm\" = \"grid\"\n\"achievable.kernels.pointwise\" = \"grid\"\n";
  const std::string text =
      replace(minimal_entry(), "[documents]\n", kernels + "[documents]\ngrid = { title = \"calibrate grid\", url = \"docs/calibration/x.csv\" }\n") +
      sources;
  const Device d = parse_device_toml(text, "t.toml");
  const KernelCurve& gemm = d.achievable.kernel_curves.at("gemm");
  EXPECT_DOUBLE_EQ(gemm.fixed_us, 4.2);
  EXPECT_DOUBLE_EQ(gemm.k_us_per_1000, 0.7);
  EXPECT_DOUBLE_EQ(gemm.tflops, 15);
  EXPECT_DOUBLE_EQ(gemm.gbps, 900);
  EXPECT_DOUBLE_EQ(d.achievable.kernel_curves.at("pointwise").tflops, 0);
  EXPECT_FALSE(d.achievable.empty());
  EXPECT_TRUE(validate_device(d).empty()) << validate_device(d).front();
  // A class without a source, a bandwidth past 5x the datasheet's, an unknown class or key, a missing term.
  EXPECT_TRUE(mentions(problems(replace(text, "\"achievable.kernels.pointwise\" = \"grid\"\n", "")),
                       "'achievable.kernels.pointwise' has no entry in [sources]"));
  EXPECT_TRUE(mentions(problems(replace(text, "gbps = 450", "gbps = 2600")), "above 5x the datasheet bandwidth"));
  EXPECT_THROW(parse_device_toml(replace(text, "pointwise = {", "softmax = {"), "t.toml"), Error);
  EXPECT_THROW(parse_device_toml(replace(text, "tflops = 15", "tflop = 15"), "t.toml"), Error);
  EXPECT_THROW(parse_device_toml(replace(text, "fixed_us = 3, ", ""), "t.toml"), Error);
  // A knee (the p of the throughput terms' p-norm) parses; below 1 it would not be a norm.
  const std::string kneed = replace(text, "tflops = 15, gbps", "tflops = 15, knee = 2, gbps");
  EXPECT_DOUBLE_EQ(parse_device_toml(kneed, "t.toml").achievable.kernel_curves.at("gemm").knee, 2);
  EXPECT_TRUE(problems(kneed).empty()) << problems(kneed).front();
  EXPECT_TRUE(mentions(problems(replace(kneed, "knee = 2", "knee = 0.5")), "knee = 0.5 is neither 0 (max) nor in [1, 16]"));
  // A short-reduction slowdown (traffic x (1 + k_half / K)) parses; a negative one is refused.
  const std::string halved = replace(text, "tflops = 15, gbps", "tflops = 15, k_half = 32, gbps");
  EXPECT_DOUBLE_EQ(parse_device_toml(halved, "t.toml").achievable.kernel_curves.at("gemm").k_half, 32);
  EXPECT_TRUE(problems(halved).empty()) << problems(halved).front();
  EXPECT_TRUE(mentions(problems(replace(halved, "k_half = 32", "k_half = -1")), "k_half = -1 is outside [0, 4096]"));
}

// An entry without a calibration takes the H100 SXM's figures, each scaled by the datasheet figure
// that sets it (docs/hwdb.md, "Derived entries"), and says so.
TEST(HardwareDb, AllReduceCurveParsesValidatesAndInterpolates) {
  const std::string curve = "[interconnect]\nallreduce_curve = { ranks = 2, bytes = [1024, 1048576, 268435456], us = [8, 16, 900] }\n";
  const Device d = parse_device_toml(replace(minimal_entry(), "[documents]", curve + "[documents]"), "t.toml");
  ASSERT_EQ(d.allreduce_curves.by_ranks.size(), 1u);
  const AllReduceCurve& c = d.allreduce_curves.by_ranks[0];
  EXPECT_DOUBLE_EQ(c.us(512), 8);                   // below the smallest size: its time
  EXPECT_NEAR(c.us(1048576), 16, 1e-9);             // a timed size: its time
  EXPECT_NEAR(c.us(32768), std::sqrt(8.0 * 16), 1e-9);  // halfway in log bytes: halfway in log time
  const double per_byte = (900.0 - 16) / (268435456 - 1048576);
  EXPECT_NEAR(c.us(2.0 * 268435456), 900 + 268435456 * per_byte, 1e-6);  // past it: the last bandwidth
  for (const char* bad : {"ranks = 1, bytes = [1024, 2048], us = [8, 9]", "ranks = 2, bytes = [2048, 1024], us = [8, 9]",
                          "ranks = 2, bytes = [1024, 2048], us = [8]", "ranks = 2, bytes = [1024, 2048], us = [8, -9]",
                          "ranks = 2, bytes = [1024, 2048], us = [8, 9], gbps = 3"}) {
    const std::string text = "[interconnect]\nallreduce_curve = { " + std::string(bad) + " }\n";
    EXPECT_THROW(parse_device_toml(replace(minimal_entry(), "[documents]", text + "[documents]"), "t.toml"), Error) << bad;
  }
}

// Curves timed over different GPU counts: each count's own where it was timed, else the nearest.
TEST(HardwareDb, AllReduceCurvesOverSeveralGpuCountsPickTheNearest) {
  const std::string curves = "[interconnect]\nallreduce_curve = [{ ranks = 4, bytes = [1024, 2048], us = [12, 13] },"
                             " { ranks = 2, bytes = [1024, 2048], us = [8, 9] }]\n";
  const Device d = parse_device_toml(replace(minimal_entry(), "[documents]", curves + "[documents]"), "t.toml");
  ASSERT_EQ(d.allreduce_curves.by_ranks.size(), 2u);
  EXPECT_EQ(d.allreduce_curves.by_ranks[0].ranks, 2);  // sorted by GPU count
  EXPECT_EQ(d.allreduce_curves.nearest(2)->ranks, 2);
  EXPECT_EQ(d.allreduce_curves.nearest(4)->ranks, 4);
  EXPECT_EQ(d.allreduce_curves.nearest(8)->ranks, 4);
  EXPECT_EQ(d.allreduce_curves.nearest(3)->ranks, 4);  // nearer 4 than 2 in log(ranks)
  EXPECT_EQ(AllReduceCurves{}.nearest(2), nullptr);
  const std::string twice = "[interconnect]\nallreduce_curve = [{ ranks = 2, bytes = [1024, 2048], us = [8, 9] },"
                            " { ranks = 2, bytes = [1024, 2048], us = [8, 9] }]\n";
  try {
    parse_device_toml(replace(minimal_entry(), "[documents]", twice + "[documents]"), "t.toml");
    ADD_FAILURE() << "two curves over one GPU count were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two curves over 2 GPUs"), std::string::npos) << e.what();
  }
}

TEST(HardwareDb, DerivedKernelCurvesFollowTheH100s) {
  const HardwareDb db = shipped();
  const Device& base = db.resolve("h100-sxm");
  ASSERT_FALSE(base.achievable.kernel_curves.empty());
  EXPECT_EQ(calibration_state(base), "calibrated");
  for (const char* id : {"h100-pcie", "a100-sxm4-80gb", "l4"}) {
    const Device& d = db.resolve(id);
    EXPECT_EQ(calibration_state(d), "derived from h100-sxm") << id;  // the H100 SXM dominates each
    const double flops = d.tensor_tflops.at("fp16") / base.tensor_tflops.at("fp16");
    const double clock = base.boost_clock_mhz / d.boost_clock_mhz;  // the K loop runs at the SM clock
    const double bytes = d.memory_bandwidth_gbps / base.memory_bandwidth_gbps;
    EXPECT_NEAR(d.achievable.memory_bandwidth_gbps, base.achievable.memory_bandwidth_gbps * bytes, 1e-6) << id;
    EXPECT_DOUBLE_EQ(d.achievable.kernel_gap_us, base.achievable.kernel_gap_us) << id;
    ASSERT_EQ(d.achievable.kernel_curves.size(), base.achievable.kernel_curves.size()) << id;
    for (const auto& [name, b] : base.achievable.kernel_curves) {
      const KernelCurve& c = d.achievable.kernel_curves.at(name);
      EXPECT_NEAR(c.fixed_us, b.fixed_us, 1e-9) << id << " " << name;
      // Per byte, the reference's DRAM time moves with the DRAM; what its SMs add beyond it (a class
      // slower than the DRAM) moves with the SMs: their count and clock (the routing's one block: the clock).
      const double dram = base.achievable.memory_bandwidth_gbps;
      const double sm_time = name == "expert_routing" ? clock : clock * base.compute_units / d.compute_units;
      const double gbps = b.gbps >= dram ? b.gbps * bytes : 1 / (1 / dram / bytes + (1 / b.gbps - 1 / dram) * sm_time);
      EXPECT_NEAR(c.gbps, gbps, 1e-6 * b.gbps) << id << " " << name;
      if (is_depthwise_curve(name)) continue;  // vector units: the vector peak
      EXPECT_NEAR(c.k_us_per_1000, b.k_us_per_1000 * clock, 1e-6 * b.k_us_per_1000 * clock) << id << " " << name;
      // The decode attention's waves of dependent steps: their rate goes with SMs x clock.
      const double rate = name == "decode_attention" ? d.compute_units / base.compute_units / clock : flops;
      EXPECT_NEAR(c.tflops, b.tflops * rate, 1e-6 * b.tflops * rate) << id << " " << name;
    }
  }
  EXPECT_EQ(calibration_state(db.resolve("h200")), "calibrated");  // measured on its own GPU
  // More bandwidth than the H100 SXM: carried over from the H200, which dominates it.
  EXPECT_EQ(calibration_state(db.resolve("gh200-96gb")), "derived from h200");
  EXPECT_EQ(calibration_state(db.resolve("epyc-9654")), "datasheet");  // CPUs keep the plain roofline
}

// The transfer a planner relies on: an H200 known only by its datasheet, derived from the H100 SXM.
TEST(HardwareDb, AnUncalibratedEntryIsDerivedFromTheNearestCalibratedGpu) {
  const HardwareDb all = shipped();
  HardwareDb db;
  Device h100 = all.resolve("h100-sxm");
  Device h200 = all.resolve("h200");
  h200.achievable = {};
  db.add(h100);
  db.add(h200);
  derive_missing_ceilings(db);
  const Device& d = db.resolve("h200");
  EXPECT_EQ(d.achievable.derived_from, "h100-sxm");
  EXPECT_GT(d.achievable.kernel_curves.at("pointwise").gbps, h100.achievable.kernel_curves.at("pointwise").gbps);
  EXPECT_NEAR(d.achievable.kernel_curves.at("gemm").tflops, h100.achievable.kernel_curves.at("gemm").tflops,
              1e-3 * h100.achievable.kernel_curves.at("gemm").tflops);  // the same GH100
  // A class the H100's SMs pace below its DRAM rate (pooling: a block's chain of loads) gains less
  // than the bandwidth ratio on the same SMs, nearer the H200's own calibration than that ratio.
  // (Depthwise is left out: the H200's grid times cuDNN's conv-only graph with a bias pass after
  // it, which the H100's older grid lacks, so the two entries price different kernels.)
  const double bandwidth = 4800.0 / 3350.0;
  for (const char* name : {"pooling", "conv", "grouped_conv"}) {
    const double ref = h100.achievable.kernel_curves.at(name).gbps, derived = d.achievable.kernel_curves.at(name).gbps;
    EXPECT_GT(derived, ref) << name;
    EXPECT_LT(derived, ref * bandwidth) << name;
    const double measured = all.resolve("h200").achievable.kernel_curves.at(name).gbps;
    EXPECT_LT(std::fabs(std::log(derived / measured)), std::fabs(std::log(ref * bandwidth / measured))) << name;
  }
}

TEST(HardwareDb, PeakFallbacksFollowTheDocumentedChain) {
  const HardwareDb db = shipped();
  auto pick = [&](const std::string& dev, MathPath path, const std::string& dtype) {
    const PeakChoice c = choose_peak(db.resolve(dev), path, dtype);
    return std::string(math_path_name(c.path)) + ":" + c.dtype + ":" + std::to_string(c.flops_per_s / 1e12);
  };
  EXPECT_EQ(pick("a100", MathPath::kTensor, "fp16"), "tensor:fp16:312.000000");
  EXPECT_EQ(pick("a100", MathPath::kTensor, "fp8"), "tensor:fp16:312.000000");    // no fp8 units: fp16
  EXPECT_EQ(pick("v100", MathPath::kTensor, "bf16"), "tensor:fp16:125.000000");   // no bf16 units: fp16
  EXPECT_EQ(pick("t4", MathPath::kTensor, "tf32"), "vector:fp32:8.100000");       // no tf32 units: CUDA cores
  EXPECT_EQ(pick("l4", MathPath::kTensor, "int4"), "tensor:int8:242.500000");
  EXPECT_EQ(pick("a100", MathPath::kVector, "fp16"), "vector:fp16:78.000000");
  EXPECT_EQ(pick("mi300x", MathPath::kVector, "bf16"), "vector:fp32:163.400000");  // no vector bf16 figure
  EXPECT_EQ(pick("epyc-9654", MathPath::kTensor, "fp16"), "vector:fp32:10.905600");
}

TEST(HardwareDb, CustomDeviceUsesOnePeakEverywhere) {
  const Device d = make_custom_device(100, 1000);
  EXPECT_EQ(d.id, "custom");
  EXPECT_EQ(d.name, "custom (100 TFLOP/s, 1000 GB/s)");
  EXPECT_DOUBLE_EQ(d.peak_flops(MathPath::kTensor, "int8"), 1e14);
  EXPECT_DOUBLE_EQ(d.peak_flops(MathPath::kVector, "fp64"), 1e14);
  EXPECT_DOUBLE_EQ(d.bandwidth_bytes_per_s(), 1e12);
  EXPECT_DOUBLE_EQ(d.launch_overhead_us, 0);
  EXPECT_THROW(make_custom_device(0, 1000), Error);
  EXPECT_THROW(make_custom_device(100, -1), Error);

  const HardwareDb db = shipped();
  const Device slow = with_overrides(db.resolve("a100"), std::nullopt, 1000.0);
  EXPECT_DOUBLE_EQ(slow.memory_bandwidth_gbps, 1000);
  EXPECT_DOUBLE_EQ(slow.peak_flops(MathPath::kTensor, "fp16"), 312e12);
  const Device flat = with_overrides(db.resolve("a100"), 50.0, std::nullopt);
  EXPECT_DOUBLE_EQ(flat.peak_flops(MathPath::kTensor, "fp16"), 50e12);
  EXPECT_DOUBLE_EQ(flat.memory_bandwidth_gbps, 2039);
}

TEST(HardwareDb, ListPrintsAHeaderThenOneDevicePerLine) {
  const HardwareDb db = shipped();
  const std::string list = format_device_list(db);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = list.find('\n', start)) != std::string::npos; start = end + 1) lines.push_back(list.substr(start, end - start));
  ASSERT_EQ(lines.size(), db.devices().size() + 1);
  EXPECT_EQ(lines[0].rfind("id ", 0), 0u) << lines[0];
  bool found = false;
  for (const auto& l : lines)
    if (l.rfind("a100-sxm4-80gb ", 0) == 0) {
      found = true;
      EXPECT_NE(l.find("A100 SXM4 80GB"), std::string::npos);
      EXPECT_NE(l.find(" 2039 "), std::string::npos) << l;
      EXPECT_NE(l.find(" 312 "), std::string::npos) << l;
      EXPECT_NE(l.find("a100,"), std::string::npos) << l;
    }
  EXPECT_TRUE(found);
}

TEST(HardwareDb, ABuildTreeBinaryReadsTheSourceTreesFilesAfterTheInstalledPlace) {
  const std::vector<std::string> places = builtin_hwdb_places();
  ASSERT_EQ(places.size(), 2u);
  EXPECT_NE(places[0].find("share/modelcost/hwdb"), std::string::npos) << places[0];
  EXPECT_EQ(places[1], std::string(MODELCOST_SOURCE_DIR) + "/hwdb");
  EXPECT_EQ(builtin_hwdb_dir(), places[1]);
}

}  // namespace modelcost::testing
