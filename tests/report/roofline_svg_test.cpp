#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "modelcost/errors.h"
#include "report/roofline_svg.h"
#include "test_support.h"

namespace modelcost::testing {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// x -> MatMul (fp16, tensor path) -> Relu -> Transpose (0 FLOPs) -> Reshape (no kernel), the last
// node named with characters XML must escape.
std::unique_ptr<AnalysisRun> small_model() {
  ModelBuilder b;
  b.input("x", kFloat16, Shape{64, 256});
  b.weight("w", kFloat16, {256, 256});
  b.node("MatMul", {"x", "w"}, {"mm"});
  b.node("Relu", {"mm"}, {"act"});
  auto& t = b.node("Transpose", {"act"}, {"tr"});
  set_attr(t, "perm", std::vector<int64_t>{1, 0});
  b.ints("flat", {-1});
  b.node("Reshape", {"tr", "flat"}, {"out"}).set_name("view<&\"'>");
  b.output("out");
  return analyse(b);
}

}  // namespace

TEST(RooflineSvg, OneMarkPerCostedNodeWithHoverNames) {
  auto run = small_model();
  const Device device = make_custom_device(100, 1000, 0, 0);
  RooflineOptions options;
  options.model_name = "Small";
  const RooflineReport report = compute_roofline(run->analysis, device, options);
  ASSERT_EQ(report.totals.launches, 3u);  // MatMul, Relu, Transpose; the Reshape runs nothing
  const std::string svg = render_roofline_svg(report, run->analysis);

  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);  // self-contained: nothing external
  // Two marks on the plane (MatMul, Relu) and one in the 0-FLOP strip (Transpose).
  EXPECT_EQ(count(svg, "<circle class=\"node "), 2u);
  EXPECT_EQ(count(svg, "<rect class=\"node memory\""), 1u);
  EXPECT_EQ(count(svg, "class=\"node compute\"") + count(svg, "class=\"node memory\""), 3u);
  // Hover labels name the node and its op.
  EXPECT_NE(svg.find("<title>mm (MatMul): "), std::string::npos);
  EXPECT_NE(svg.find("<title>tr (Transpose): memory-bound"), std::string::npos);
  EXPECT_EQ(svg.find("view<&"), std::string::npos);  // never unescaped
  // One roof per (path, dtype) in use: a custom device has one peak, so one roof.
  EXPECT_EQ(count(svg, "<polyline"), report.roofs.size());
  EXPECT_NE(svg.find("1000 GB/s"), std::string::npos);
  EXPECT_NE(svg.find("Small on custom"), std::string::npos);
  // The deployed kernel: MatMul, Relu and Transpose fused into one group, drawn as a diamond.
  EXPECT_EQ(count(svg, "<path class=\"group "), 1u);
  EXPECT_NE(svg.find("kernel #0 matmul+relu (4 nodes"), std::string::npos);
  // The heaviest nodes are numbered 1..3 in the legend.
  EXPECT_NE(svg.find(">1.</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">3.</tspan>"), std::string::npos);
  EXPECT_EQ(svg.find(">4.</tspan>"), std::string::npos);
}

TEST(RooflineSvg, OverheadBoundMarksAndTheDatasheetRoof) {
  auto run = small_model();
  const HardwareDb db = load_hardware_db({}, false);
  const RooflineReport report = compute_roofline(run->analysis, db.resolve("h100"));
  const std::string svg = render_roofline_svg(report, run->analysis);
  // Tiny nodes: the per-kernel overhead is their largest term.
  EXPECT_EQ(count(svg, "class=\"node overhead\""), 3u);
  EXPECT_NE(svg.find("overhead-bound (3)"), std::string::npos);
  // The H100 entry has achievable ceilings: the datasheet roof is drawn dashed above them.
  EXPECT_GE(count(svg, "<polyline class=\"datasheet\""), 1u);
}

TEST(RooflineSvg, EscapesNamesAndDrawsEveryRoofOfARealDevice) {
  auto run = small_model();
  const HardwareDb db = load_hardware_db({}, false);
  RooflineOptions as_written;
  as_written.view = "as-written";
  as_written.datasheet = true;  // the datasheet roofs alone (the entry's derived ceilings draw more)
  const RooflineReport report = compute_roofline(run->analysis, db.resolve("a100"), as_written);
  // fp16 MatMul on the tensor fp16 roof, fp16 Relu/Transpose on the vector fp16 roof.
  ASSERT_EQ(report.roofs.size(), 2u);
  const std::string svg = render_roofline_svg(report, run->analysis);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_NE(svg.find("tensor fp16: 312 TFLOP/s"), std::string::npos);
  EXPECT_NE(svg.find("vector fp16: 78 TFLOP/s"), std::string::npos);
  // Every '<' in the document opens a tag: the escaped name cannot break the markup.
  for (size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1))
    EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(svg[at + 1])) || svg[at + 1] == '/' || svg[at + 1] == '?')
        << svg.substr(at, 20);
}

TEST(RooflineSvg, WritesAFileOrFailsCleanly) {
  auto run = small_model();
  const Device device = make_custom_device(100, 1000);  // the report points at it
  const RooflineReport report = compute_roofline(run->analysis, device);
  const std::string path = (std::filesystem::temp_directory_path() / "modelcost-roofline-test.svg").string();
  write_roofline_svg(path, report, run->analysis);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), render_roofline_svg(report, run->analysis));
  std::filesystem::remove(path);
  try {
    write_roofline_svg("/nonexistent-dir/x.svg", report, run->analysis);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnreadable);
  }
}

}  // namespace modelcost::testing
